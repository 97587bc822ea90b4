// The sandbox: a hostile template stops with a TemplateError (never a crash or a hang), and it
// cannot reach anything the sandbox does not offer.
#include <gtest/gtest.h>

#include <string>

#include "chat/chat_template.hpp"

namespace {

using overhead::chat::ChatTemplate;
using overhead::chat::RenderOptions;
using overhead::chat::TemplateError;

std::string render_error(const std::string& src, RenderOptions o = {}) {
  try {
    ChatTemplate::compile(src, "t")->render(nlohmann::json::array(), o);
  } catch (const TemplateError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ChatLimits, NestedLoopsHitTheIterationLimit) {
  RenderOptions o;
  o.max_loop_iterations = 100000;
  {
    const std::string e =
        render_error("{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}", o);
    EXPECT_NE(e.find("loop iteration limit"), std::string::npos) << e;
  }
}

TEST(ChatLimits, OutputSizeIsBounded) {
  RenderOptions o;
  o.max_output_bytes = 1 << 16;
  EXPECT_NE(render_error("{% for a in range(100000) %}xxxxxxxxxx{% endfor %}", o).find("output size limit"),
            std::string::npos);
  EXPECT_NE(render_error("{{ 'x' * 1000000000 }}", o).find("output size limit"), std::string::npos);
}

TEST(ChatLimits, RecursionIsBounded) {
  const std::string e = render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  EXPECT_NE(e.find("maximum recursion depth"), std::string::npos) << e;
}

TEST(ChatLimits, DeepNestingIsASyntaxErrorNotAStackOverflow) {
  const std::string src = "{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}";
  EXPECT_NE(render_error(src).find("nesting too deep"), std::string::npos);
}

TEST(ChatLimits, RangeIsCappedAsInTheSandbox) {
  EXPECT_NE(render_error("{{ range(1000000) | length }}").find("MAX_RANGE"), std::string::npos);
}

TEST(ChatLimits, MutatingMethodsAreRefused) {
  EXPECT_NE(render_error("{% set l = [] %}{{ l.append(1) }}").find("is unsafe"), std::string::npos);
  EXPECT_NE(render_error("{% set d = {} %}{{ d.update({'a': 1}) }}").find("is unsafe"), std::string::npos);
}

TEST(ChatLimits, ErrorsNameTemplateLineAndColumn) {
  EXPECT_EQ(render_error("line1\n  {{ raise_exception('boom') }}"), "t:2:6: boom");
  EXPECT_EQ(render_error("{% if %}"), "t:1:7: unexpected 'end of statement block'");
  EXPECT_EQ(render_error("{{ x | nosuchfilter }}"), "t:1:8: No filter named 'nosuchfilter'.");
}

}  // namespace
