// The incremental detokenizer's property on every MT-Bench message for every seed tokenizer:
// the message's ids pushed one by one (so the stream is cut after every token), plus finish(),
// concatenate to Tokenizer::decode(all ids), with skip_special_tokens off and on, and every delta
// is valid UTF-8; and the stream finished early, at two random cuts per message, equals decode()
// of the ids up to the cut. Labelled slow with the other MT-Bench goldens.
#include <gtest/gtest.h>

#include <random>
#include <span>
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
  std::mt19937 rng(36);
  Ids ids;
  for (const golden::MtBenchMessage& m : golden::mtbench_messages()) {
    ids.clear();
    tok->encode_into(m.text, ids, true);
    tokens += ids.size();
    std::uniform_int_distribution<std::size_t> cut(0, ids.size());
    const std::size_t cuts[] = {ids.size(), cut(rng), cut(rng)};
    for (const std::size_t n : cuts) {
      for (const bool skip : {false, true}) {
        const std::string why = check_stream(*tok, std::span(ids).first(n), skip);
        if (!why.empty() && ++failures <= golden::kMaxReported)
          ADD_FAILURE() << GetParam() << ": record " << m.record << " message " << m.message << " cut after " << n
                        << " ids " << golden::excerpt(m.text) << ": " << why;
      }
    }
  }
  EXPECT_EQ(failures, 0) << GetParam() << ": " << failures << " streams differ from decode";
  EXPECT_GT(tokens, 0u);
}

INSTANTIATE_TEST_SUITE_P(All, MtBenchStreams, ::testing::ValuesIn(golden::golden_tokenizer_names()),
                         golden::gtest_name_of);

}  // namespace
}  // namespace overhead::tok::incremental_test
