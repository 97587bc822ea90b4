// What a new user reads first: `run --help` names the five cases, every backend's URL form and the
// docs; `template --help` shows the --field default and every form --tokenizer takes; `--version`
// prints the project's version.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

std::string help_of(const std::string& command) {
  const RunResult r = run_overhead(command + " --help");
  EXPECT_EQ(r.exit_code, 0) << command;
  std::string text;
  for (const auto& l : r.lines) text += l + "\n";
  return text;
}

TEST(Help, RunNamesTheCasesTheBackendsAndTheDocs) {
  const std::string h = help_of("run");
  for (const char* want : {"1  local JSONL > tokenize > memory > CSV", "5  input queue > tokenize",
                           "mem:[NAME]", "sqlite-queue:PATH", "redis://", "sqs://QUEUE_NAME", "sqlite:PATH",
                           "postgres://", "dynamodb://TABLE", "file:DIR", "s3://BUCKET", "docs/pipeline.md"})
    EXPECT_NE(h.find(want), std::string::npos) << want << "\n" << h;
}

TEST(Help, TemplateShowsTheFieldDefaultAndTheTokenizerForms) {
  for (const char* command : {"template", "bench template"}) {
    const std::string h = help_of(command);
    EXPECT_NE(h.find("=messages"), std::string::npos) << h;
    EXPECT_NE(h.find("HF model id"), std::string::npos) << h;
  }
}

TEST(Help, VersionPrintsTheProjectVersionAndExitsZero) {
  const RunResult r = run_overhead("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.lines.size(), 1u) << r.err;
  EXPECT_EQ(r.lines[0], std::string("overhead ") + OVERHEAD_PROJECT_VERSION);
}

}  // namespace
