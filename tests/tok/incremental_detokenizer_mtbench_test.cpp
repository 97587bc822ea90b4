// The incremental detokenizer's property on every MT-Bench message for every seed tokenizer:
// the message's ids pushed one by one (so the stream is cut after every token), plus finish(),
// concatenate to Tokenizer::decode(all ids), with skip_special_tokens off and on, and every delta
// is valid UTF-8. Labelled slow with the other MT-Bench goldens.
#include <gtest/gtest.h>

#include <string>

#include "golden_support.hpp"
#include "incremental_detokenizer_support.hpp"

namespace overhead::tok::incremental_test {
namespace {

class MtBenchStreams : public ::testing::TestWithParam<std::string> {};

TEST_P(MtBenchStreams, EveryMessageStreamsToItsDecode) {
  const auto tok = Tokenizer::load(GetParam());
  int failures = 0;
  std::size_t tokens = 0;
  Ids ids;
  for (const golden::MtBenchMessage& m : golden::mtbench_messages()) {
    ids.clear();
    tok->encode_into(m.text, ids, true);
    tokens += ids.size();
    for (const bool skip : {false, true}) {
      const std::string why = check_stream(*tok, ids, skip);
      if (!why.empty() && ++failures <= golden::kMaxReported)
        ADD_FAILURE() << GetParam() << ": record " << m.record << " message " << m.message << " "
                      << golden::excerpt(m.text) << ": " << why;
    }
  }
  EXPECT_EQ(failures, 0) << GetParam() << ": " << failures << " streams differ from decode";
  EXPECT_GT(tokens, 0u);
}

INSTANTIATE_TEST_SUITE_P(All, MtBenchStreams, ::testing::ValuesIn(golden::golden_tokenizer_names()),
                         golden::gtest_name_of);

}  // namespace
}  // namespace overhead::tok::incremental_test
