// `overhead tokenize --chat` on every MT-Bench record as the seed ran them (field prompt, no
// generation prompt), for the seed's three tokenizers and both encodings, equal to the reference
// pipeline (@huggingface/jinja render + HF tokenizers encode) record by record (count + digest of
// the ids; goldens by scripts/make_chat_tok_goldens.sh).
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

class TokenizeChatMtBench : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (!have_tokenizer(GetParam())) GTEST_SKIP() << "tokenizer files not fetched: " << GetParam();
  }
};

// Every MT-Bench record, as the seed ran them (field prompt, no generation prompt): exit 0.
TEST_P(TokenizeChatMtBench, AsTheSeedEncodes) {
  check_against(GetParam(), GetParam() + ".mtbench.jsonl.gz", "", "ids", 0);
}
TEST_P(TokenizeChatMtBench, NoSpecial) {
  check_against(GetParam(), GetParam() + ".mtbench.jsonl.gz", "--no-special", "ids_no_special", 0);
}
INSTANTIATE_TEST_SUITE_P(Seed, TokenizeChatMtBench, ::testing::ValuesIn(kSeedTokenizers),
                         [](const auto& p) { return param_name(p.param); });

}  // namespace
