// Sizes and integers taken from a template: each is checked against the render's bounds before anything is
// allocated (a hostile width is an error, not gigabytes or bad_alloc), and large but harmless arguments give
// what Jinja2 gives instead of wrapping around.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "chat/chat_template.hpp"

namespace {

using overhead::chat::ChatTemplate;
using overhead::chat::RenderOptions;
using overhead::chat::TemplateError;

std::string render(const std::string& src) {
  return ChatTemplate::compile(src, "t")->render(nlohmann::json::array(), RenderOptions{});
}

std::string render_error(const std::string& src) {
  try {
    render(src);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "(no error)";
}

bool size_refused(const std::string& src) {
  return render_error(src).find("output size limit") != std::string::npos;
}

TEST(ChatBounds, HugeWidthsAreRefusedBeforeAllocating) {
  EXPECT_TRUE(size_refused("{{ 'a'|center(999999999) }}"));
  EXPECT_TRUE(size_refused("{{ 'a'|center(9223372036854775807) }}"));
  EXPECT_TRUE(size_refused("{{ 'a\nb'|indent(999999999) }}"));
  EXPECT_TRUE(size_refused("{{ 'a\nb'|indent(9223372036854775807, true) }}"));
  EXPECT_TRUE(size_refused("{{ '%.999999999f'|format(1.0) }}"));
  EXPECT_TRUE(size_refused("{{ '%999999999d'|format(1) }}"));
  EXPECT_TRUE(size_refused("{{ '%99999999999999999999999s'|format('x') }}"));
}

TEST(ChatBounds, PercentFormatIsNotCutAt511Bytes) {
  EXPECT_EQ(render("{{ ('%5s'|format('x' * 1000))|length }}"), "1000");
  EXPECT_EQ(render("{{ ('%-600s|'|format('x'))|length }}"), "601");
  EXPECT_EQ(render("{{ ('%800d'|format(7))|length }}"), "800");
  EXPECT_EQ(render("{{ ('%.600f'|format(1.5))|length }}"), "602");
}

TEST(ChatBounds, PercentStringPadsAndCutsByCodePoints) {
  EXPECT_EQ(render("{{ '[%5s]'|format('é') }}"), "[    é]");
  EXPECT_EQ(render("{{ '[%-3s]'|format('ab') }}"), "[ab ]");
  EXPECT_EQ(render("{{ '[%.2s]'|format('éèà') }}"), "[éè]");
  EXPECT_EQ(render("{{ '[%5.1s]'|format('abc') }}"), "[    a]");
  EXPECT_EQ(render("{{ '%05d|%+d|%x|%#x|%.2e'|format(42, 3, 255, 255, 1234.5) }}"), "00042|+3|ff|0xff|1.23e+03");
}

TEST(ChatBounds, LargeIntegerArgumentsDoNotWrap) {
  EXPECT_EQ(render("{{ 'abc'|truncate(9223372036854775807) }}"), "abc");
  EXPECT_EQ(render("{{ 'abc'|truncate(9223372036854775807, leeway=9223372036854775807) }}"), "abc");
  EXPECT_EQ(render("{{ 1.5|round(999999999) }}"), "1.5");
  EXPECT_EQ(render("{{ 1.5|round(-999999999) }}"), "0.0");
  EXPECT_EQ(render("{{ 2.5|round(400) }}"), "2.5");
  // Expected values from Jinja2 (ImmutableSandboxedEnvironment), as the peer suite is.
  EXPECT_NE(render_error("{{ 1.5|round(-99999999999, 'floor') }}").find("float division by zero"), std::string::npos);
  EXPECT_NE(render_error("{{ 1.5|round(-99999999999, 'ceil') }}").find("float division by zero"), std::string::npos);
  EXPECT_EQ(render("{{ range(0, 9223372036854775807, 4611686018427387904)|list }}"), "[0, 4611686018427387904]");
  EXPECT_EQ(render("{{ range(-9223372036854775807, 9223372036854775807, 9223372036854775807)|list }}"),
            "[-9223372036854775807, 0]");
  EXPECT_EQ(render("{{ range(9223372036854775807, -9223372036854775807, -9223372036854775807)|list }}"),
            "[9223372036854775807, 0]");
  EXPECT_EQ(render("{{ range(5, -9223372036854775807, -9223372036854775807)|list }}"), "[5, -9223372036854775802]");
}

}  // namespace

namespace {

TEST(ChatBounds, StrFormatWidthAndPrecisionAreBounded) {
  EXPECT_TRUE(size_refused("{{ '{:999999999}'.format('a') }}"));
  EXPECT_TRUE(size_refused("{{ '{:99999999999999999999999}'.format('a') }}"));
  EXPECT_TRUE(size_refused("{{ '{:.99999999999}f'.format(1.5) }}"));
  EXPECT_EQ(render("{{ ('{:.300f}'.format(1.5))|length }}"), "302");
  EXPECT_EQ(render("{{ '[{:>5}]'.format('ab') }}"), "[   ab]");
}

TEST(ChatBounds, TojsonIndentIsBoundedBeforeBuilding) {
  EXPECT_TRUE(size_refused("{{ [1, 2]|tojson(indent=999999999) }}"));
  EXPECT_TRUE(size_refused("{{ [[[[1]]]]|tojson(indent=20000000) }}"));
  EXPECT_EQ(render("{{ {'a': [1]}|tojson(indent=2) }}"), "{\n  \"a\": [\n    1\n  ]\n}");
}

TEST(ChatBounds, ListGrowthCountsAgainstTheBound) {
  EXPECT_TRUE(size_refused(
      "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"));
}

}  // namespace

namespace {

// Renders `src` with a render time budget of `ms`; returns the error text and the wall time.
std::pair<std::string, double> render_with_budget(const std::string& src, std::uint32_t ms) {
  RenderOptions o;
  o.max_render_ms = ms;
  o.max_loop_iterations = ~std::uint64_t{0};  // only the clock may stop these
  const auto start = std::chrono::steady_clock::now();
  std::string error = "(no error)";
  try {
    ChatTemplate::compile(src, "t")->render(nlohmann::json::array(), o);
  } catch (const TemplateError& e) {
    error = e.what();
  }
  return {error, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

// Work that no other limit stops soon: 2^40 macro calls with no loop and no output (the call
// depth is 40, the iteration count 0), loops of 10^15 steps that print nothing, and a short loop
// copying a large string. Without the time budget each runs for minutes to hours; with 200 ms each
// stops with the budget's error, naming it.
TEST(ChatBounds, ARenderStopsAtItsTimeBudget) {
  const std::string calls =
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(40) }}";
  const std::string loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}{% endfor %}{% endfor %}{% endfor %}";
  // Few steps, each costly: 1,000 copies of a 48 MB string (about 48 GB copied).
  const std::string copies =
      "{% set s = 'x' * 48000000 %}{% for i in range(1000) %}{% set t = s ~ 'y' %}{% endfor %}";
  for (const std::string& src : {calls, loop, copies}) {
    const auto [error, seconds] = render_with_budget(src, 200);
    EXPECT_NE(error.find("render time limit exceeded (200 ms)"), std::string::npos) << error;
    EXPECT_GE(seconds, 0.2) << src;
    EXPECT_LT(seconds, 30.0) << src;  // generous: a loaded machine and sanitizer builds
  }
  // Ordinary templates never see the clock's budget.
  EXPECT_EQ(render_with_budget("{% for i in range(3) %}{{ i }}{% endfor %}", 1).first, "(no error)");
}

}  // namespace
