// A conversation nested deeper than the template engine takes is an error of the input line, not
// of the tokenizer's tokenizer_config.json.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

TEST(InputNesting, TooDeepIsBlamedOnTheLine) {
  const auto dir = temp_dir("nesting");
  std::string deep(400, '[');
  deep += std::string(400, ']');
  const std::string input = write_file(
      dir / "in.jsonl", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"x\":" + deep + "}]}\n");
  const std::string tmpl = write_file(dir / "t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  const RunResult r = run_overhead("template --template '" + tmpl + "' --input '" + input + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_NE(r.lines[0].find("line 1: input nested too deeply"), std::string::npos) << r.lines[0];
  EXPECT_EQ(r.lines[0].find("t.jinja"), std::string::npos) << "the template is not to blame: " << r.lines[0];
}

}  // namespace
