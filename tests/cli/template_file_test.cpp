// `template --template PATH` must name a template file: a folder (which reads as empty on Linux)
// or a missing path is an error naming it, not an empty rendering with exit 0.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

TEST(TemplateFile, AFolderOrMissingPathIsAnErrorNamingIt) {
  const auto dir = temp_dir("tmplfile");
  const std::string input = write_file(dir / "in.jsonl", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n");
  const RunResult folder = run_overhead("template --template '" + dir.string() + "' --input '" + input + "'");
  EXPECT_NE(folder.exit_code, 0);
  EXPECT_TRUE(folder.lines.empty()) << folder.lines[0];
  EXPECT_NE(folder.err.find(dir.string() + ": not a template file"), std::string::npos) << folder.err;
  const RunResult missing = run_overhead("template --template '" + (dir / "nope.jinja").string() + "' --input '" + input + "'");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
  // A real file still renders.
  const std::string tmpl = write_file(dir / "t.jinja", "{% for m in messages %}{{ m.content }}{% endfor %}");
  const RunResult ok = run_overhead("template --template '" + tmpl + "' --input '" + input + "'");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  ASSERT_EQ(ok.lines.size(), 1u);
  EXPECT_EQ(ok.lines[0], "{\"text\":\"hi\"}");
}

}  // namespace
