// The incremental detokenizer's property: the deltas of ids pushed one by one, plus finish(),
// concatenate to Tokenizer::decode(all ids) byte for byte, and every delta is valid UTF-8.
// Checked on every seed tokenizer (hard texts, every prefix of them, random id sequences rich
// in byte tokens and special tokens) and on small tokenizers written here for the decoder
// chains no seed has (llama-2's Strip, Metaspace, no decoder). MT-Bench: the _mtbench test.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cache_test_support.hpp"
#include "golden_support.hpp"
#include "incremental_detokenizer_support.hpp"
#include "tok/byte_level.hpp"
#include "tok/tokenizer_impl.hpp"

namespace overhead::tok::incremental_test {
namespace {

const std::vector<std::string>& hard_texts() {
  static const std::vector<std::string> texts = {
      "Hello, world!",
      "  two leading spaces, trailing  ",
      "\xF0\x9F\x91\x8B\xF0\x9F\x8F\xBD wave, \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7 family",
      "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88\xE3\x80\x82",
      "e\xCC\x81 a\xCC\x88 n\xCC\x83 combining marks",
      "\xF0\xA0\x9C\x8E\xF0\xA0\x9C\xB1\xF0\xA0\x9D\xB9 rare CJK, \xEA\xB3\xB5 \xE1\x84\x80\xE1\x85\xA1 Hangul jamo",
      "\xE2\x96\x81 a literal metaspace \xE2\x96\x81\xE2\x96\x81",
      "<|begin_of_text|>hi<|eot_id|><|start_header_id|>user<|end_header_id|>",
      "<bos><start_of_turn>user\nhi<end_of_turn>\n<eos>",
      "<|im_start|>system<|im_sep|>x<|im_end|><|endoftext|>",
      "tabs\tand\nnewlines\r\n\n\n  indented",
      "\xF0\x9F\xA7\xAA\xF0\x9F\xAB\xA8\xF0\x9F\xAA\xBF new emoji that fall back to bytes",
      "\xEF\xBF\xBD already a replacement char",
  };
  return texts;
}

// Ids worth drawing often: the single-byte tokens of a ByteLevel vocabulary, the <0xNN> tokens of
// a byte-fallback one, and every added token (special or not).
std::vector<TokenId> interesting_ids(const Tokenizer& tok) {
  std::vector<TokenId> ids;
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (unsigned b = 0; b < 256; ++b) {
    std::string mapped;
    util::utf8::append(mapped, byte_level::byte_to_char(static_cast<std::uint8_t>(b)));
    if (const auto id = tok.token_to_id(mapped)) ids.push_back(*id);
    if (const auto id = tok.token_to_id(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">")) ids.push_back(*id);
  }
  for (const AddedToken& a : tok.impl().added->tokens()) ids.push_back(a.id);
  return ids;
}

std::string check_random_streams(const Tokenizer& tok, int count) {
  std::mt19937 rng(20261206);
  const std::vector<TokenId> interesting = interesting_ids(tok);
  std::uniform_int_distribution<TokenId> any(0, static_cast<TokenId>(tok.vocab_size() - 1));
  std::uniform_int_distribution<std::size_t> pick(0, interesting.size() - 1), length(0, 24);
  std::uniform_int_distribution<int> coin(0, 9);
  std::vector<TokenId> ids;
  for (int n = 0; n < count; ++n) {
    ids.clear();
    for (std::size_t k = length(rng); k > 0; --k) ids.push_back(coin(rng) < 6 ? interesting[pick(rng)] : any(rng));
    for (const bool skip : {false, true}) {
      if (std::string why = check_stream(tok, ids, skip); !why.empty()) return "random sequence " + std::to_string(n) + ": " + why;
    }
  }
  return "";
}

// Every prefix of the text's ids (a stream cut anywhere, inside a character too) and the whole.
std::string check_every_prefix(const Tokenizer& tok, const std::string& text) {
  const Ids ids = tok.encode(text, true);
  for (std::size_t n = 0; n <= ids.size(); ++n) {
    for (const bool skip : {false, true}) {
      if (std::string why = check_stream(tok, std::span(ids).first(n), skip); !why.empty())
        return golden::excerpt(text) + " cut after " + std::to_string(n) + " ids: " + why;
    }
  }
  return "";
}

class SeedTokenizers : public ::testing::TestWithParam<std::string> {};

TEST_P(SeedTokenizers, StreamsEveryFamilyIncrementally) {
  const auto tok = Tokenizer::load(GetParam());
  EXPECT_NE(IncrementalDetokenizer(*tok).method(), IncrementalDetokenizer::Method::kWhole)
      << GetParam() << ": its decoder chain is not streamed";
}

TEST_P(SeedTokenizers, HardTextsCutAfterEveryToken) {
  const auto tok = Tokenizer::load(GetParam());
  for (const std::string& text : hard_texts()) EXPECT_EQ(check_every_prefix(*tok, text), "") << GetParam();
}

TEST_P(SeedTokenizers, RandomIdsRichInBytesAndSpecials) {
  const auto tok = Tokenizer::load(GetParam());
  EXPECT_EQ(check_random_streams(*tok, 3000), "") << GetParam();
}

TEST_P(SeedTokenizers, RestartsAfterFinish) {
  const auto tok = Tokenizer::load(GetParam());
  IncrementalDetokenizer stream(*tok);
  for (int round = 0; round < 2; ++round) {
    const Ids ids = tok->encode(hard_texts()[3], true);
    std::string all;
    for (const TokenId id : ids) stream.push(id, all);
    stream.finish(all);
    EXPECT_EQ(all, tok->decode(ids)) << GetParam() << " round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(All, SeedTokenizers, ::testing::ValuesIn(golden::golden_tokenizer_names()),
                         golden::gtest_name_of);

// Small SentencePiece-style tokenizers with the decoder chains no seed has.
struct Chain {
  std::string name;
  nlohmann::json decoder;
  IncrementalDetokenizer::Method method;
};

std::vector<Chain> chains() {
  const nlohmann::json replace = {{"type", "Replace"}, {"pattern", {{"String", "\xE2\x96\x81"}}}, {"content", " "}};
  const nlohmann::json fallback = {{"type", "ByteFallback"}}, fuse = {{"type", "Fuse"}};
  const nlohmann::json strip = {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}};
  const nlohmann::json strip_both = {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 1}};
  const nlohmann::json metaspace = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "always"}, {"split", true}};
  const nlohmann::json never = {{"type", "Metaspace"}, {"replacement", "\xE2\x96\x81"}, {"prepend_scheme", "never"}, {"split", true}};
  using M = IncrementalDetokenizer::Method;
  auto seq = [](std::initializer_list<nlohmann::json> steps) {
    return nlohmann::json{{"type", "Sequence"}, {"decoders", nlohmann::json::array_t(steps)}};
  };
  return {
      {"llama2", seq({replace, fallback, fuse, strip}), M::kPieces},
      {"gemma", seq({replace, fallback, fuse}), M::kPieces},
      {"metaspace", metaspace, M::kPieces},
      {"metaspace_never", never, M::kPieces},
      {"metaspace_fallback", seq({metaspace, fallback, fuse}), M::kPieces},
      {"strip_per_token", seq({replace, strip_both, fallback, fuse}), M::kPieces},
      {"no_decoder", nullptr, M::kSpaces},
      {"strip_after_fallback", seq({replace, fallback, strip_both, fuse}), M::kWhole},
      {"fuse_then_replace", seq({fallback, fuse, replace}), M::kWhole},
  };
}

TEST(IncrementalDetokenizerChains, EveryChainExact) {
  for (const Chain& chain : chains()) {
    cache_test::TempDir dir("incremental_detok_" + chain.name);
    nlohmann::json j = cache_test::char_level_tokenizer({"a b", "ab c", "\xE2\x96\x81 a"});
    std::uint32_t next = static_cast<std::uint32_t>(j["model"]["vocab"].size());
    for (const char* piece : {"\xE2\x96\x81", "\xE2\x96\x81\xE2\x96\x81", " ", "\xE2\x96\x81" "b", "b\xE2\x96\x81"}) {
      if (!j["model"]["vocab"].contains(piece)) j["model"]["vocab"][piece] = next++;
    }
    j["added_tokens"] = {{{"id", next}, {"content", "<s>"}, {"special", true}, {"normalized", false}},
                         {{"id", next + 1}, {"content", "<x>"}, {"special", false}, {"normalized", false}}};
    j["decoder"] = chain.decoder;
    cache_test::write_file(dir.path() / "tokenizer.json", j.dump());
    const auto tok = Tokenizer::load((dir.path() / "tokenizer.json").string(), LoadOptions{.cache_dir = ""});
    EXPECT_EQ(IncrementalDetokenizer(*tok).method(), chain.method) << chain.name;
    EXPECT_EQ(check_random_streams(*tok, 3000), "") << chain.name;
    for (const std::string& text : hard_texts()) EXPECT_EQ(check_every_prefix(*tok, text), "") << chain.name;
  }
}

}  // namespace
}  // namespace overhead::tok::incremental_test
