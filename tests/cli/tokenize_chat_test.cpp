// `overhead tokenize --chat` run as a user runs it (the built binary) on the fixture
// data/chat/tokenize_cases.jsonl, compared with the reference pipeline (chat template rendered by
// @huggingface/jinja, text encoded by HF tokenizers; goldens by scripts/make_chat_tok_goldens.sh):
// full ids, both encodings, with and without the generation prompt, error lines and exit codes.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;
namespace fs = std::filesystem;

class TokenizeChat : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_tokenizer(GetParam())) GTEST_SKIP() << "tokenizer files not fetched: " << GetParam();
  }
};

// The fixture has lines that fail (bad JSON, no messages, a role the template refuses): exit 1.
TEST_P(TokenizeChat, CasesAsTheSeedEncodes) { check_against(GetParam(), GetParam() + ".cases.jsonl", "", "ids", 1); }
TEST_P(TokenizeChat, CasesNoSpecial) {
  check_against(GetParam(), GetParam() + ".cases.jsonl", "--no-special", "ids_no_special", 1);
}
TEST_P(TokenizeChat, CasesWithGenerationPrompt) {
  check_against(GetParam(), GetParam() + ".cases-agp.jsonl", "", "ids", 1);
}

INSTANTIATE_TEST_SUITE_P(Seed, TokenizeChat, ::testing::ValuesIn(kSeedTokenizers),
                         [](const auto& p) { return param_name(p.param); });

// Usage errors: exit 2 with the reason on stderr, nothing on stdout.
TEST(TokenizeChatUsage, BadDate) {
  const std::string cases = (kData / "chat" / "tokenize_cases.jsonl").string();
  for (const char* date : {"2024-7-26", "2024-02-30", "20240726", "2024-13-01", "yyyy-mm-dd"}) {
    const RunResult r = run_overhead("tokenize --chat --tokenizer phi-4 --input '" + cases + "' --date " + date);
    EXPECT_EQ(r.exit_code, 2) << date;
    EXPECT_TRUE(r.lines.empty()) << date;
    EXPECT_NE(r.err.find("--date"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(date), std::string::npos) << r.err;
  }
}

TEST(TokenizeChatUsage, ChatOptionsNeedChat) {
  const std::string cases = (kData / "chat" / "tokenize_cases.jsonl").string();
  const RunResult r = run_overhead("tokenize --tokenizer phi-4 --input '" + cases + "' --add-generation-prompt");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("need --chat"), std::string::npos) << r.err;
}

TEST(TokenizeChatUsage, MissingInputFileFails) {
  if (!have_tokenizer("phi-4")) GTEST_SKIP() << "tokenizer files not fetched";
  const RunResult r = run_overhead("tokenize --chat " + tokenizer_arg("phi-4") + " --input /nonexistent/x.jsonl");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/x.jsonl"), std::string::npos) << r.err;
}

TEST(TokenizeChatUsage, HelpDocumentsTheDoubleBos) {
  const RunResult r = run_overhead("tokenize --help");
  EXPECT_EQ(r.exit_code, 0);
  std::string all;
  for (const auto& l : r.lines) all += l + "\n";
  EXPECT_NE(all.find("two BOS"), std::string::npos) << all;
  EXPECT_NE(all.find("--chat"), std::string::npos) << all;
}

}  // namespace
