// The compiled cache of each seed tokenizer encodes exactly as its load from JSON: the golden
// corpus and every 10th MT-Bench message, with and without special tokens, and the decodes.
// Heavy (three full loads from JSON per tokenizer), so labelled slow.
#include <gtest/gtest.h>

#include <string>

#include "cache_test_support.hpp"
#include "golden_support.hpp"
#include "tok/tokenizer.hpp"

namespace overhead::tok {
namespace {

using Kind = CacheStatus::Kind;

class SeedCacheTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SeedCacheTest, CachedLoadEncodesAsTheLoadFromJson) {
  const std::string& name = GetParam();
  cache_test::TempDir cache("seed-" + name);
  const auto fresh = Tokenizer::load(name, LoadOptions{""});
  CacheStatus built_status, hit_status;
  const auto built = Tokenizer::load(name, LoadOptions{cache.path().string()}, &built_status);
  ASSERT_EQ(built_status.kind, Kind::kBuilt) << built_status.reason;
  const auto cached = Tokenizer::load(name, LoadOptions{cache.path().string()}, &hit_status);
  ASSERT_EQ(hit_status.kind, Kind::kHit) << hit_status.reason;

  std::vector<std::string> texts = golden::load_corpus();
  const auto& messages = golden::mtbench_messages();
  for (std::size_t k = 0; k < messages.size(); k += 10) texts.push_back(messages[k].text);
  int mismatches = 0;
  for (const std::string& text : texts) {
    for (const bool special : {true, false}) {
      const Ids want = fresh->encode(text, special);
      if (cached->encode(text, special) != want || built->encode(text, special) != want) {
        if (++mismatches <= golden::kMaxReported)
          ADD_FAILURE() << name << ": " << golden::excerpt(text) << ": "
                        << golden::describe_ids_difference(want, cached->encode(text, special));
      }
      if (cached->decode(want, !special) != fresh->decode(want, !special))
        ADD_FAILURE() << name << ": decode differs for " << golden::excerpt(text);
    }
  }
  EXPECT_EQ(cached->vocab_size(), fresh->vocab_size());
  EXPECT_EQ(cached->config(), fresh->config());
}

INSTANTIATE_TEST_SUITE_P(Seeds, SeedCacheTest,
                         ::testing::Values("phi-4", "gemma-2-27b-it", "llama-3.3-70b-instruct"),
                         golden::gtest_name_of);

}  // namespace
}  // namespace overhead::tok
