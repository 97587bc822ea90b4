// Sizes and integers taken from a template: each is checked against the render's bounds before anything is
// allocated (a hostile width is an error, not gigabytes or bad_alloc), and large but harmless arguments give
// what Jinja2 gives instead of wrapping around.
#include <gtest/gtest.h>

#include <string>

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
