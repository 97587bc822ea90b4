// The production merge loop against the naive reference BPE (reference_bpe.hpp), piece by piece,
// on seeded random strings for the three seed tokenizers. The pieces are drawn so that every
// path of BpeModel::encode_piece runs: short pieces (the small-array merge), pieces long enough
// to be cut at merge boundaries (chunked), runs no boundary cuts (more than 16 symbols: the heap
// merge), repeats (the per-thread piece cache and chunk memo answer), Japanese text and
// characters outside the vocabulary (byte-level splits; Gemma's <0xXX> byte fallback). Each piece
// is encoded by a model with its piece cache on (twice: the second answer comes from the cache)
// and one with it off (OVERHEAD_BPE_CACHE=0), and all must equal the reference.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <random>
#include <string>
#include <vector>

#include "golden_support.hpp"
#include "reference_bpe.hpp"
#include "tok/tokenizer.hpp"
#include "tok/tokenizer_impl.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {
namespace {

// Characters that occur in the MT-Bench messages, each once (mostly Japanese).
std::vector<char32_t> mtbench_characters() {
  std::vector<bool> seen(0x110000, false);
  std::vector<char32_t> out;
  for (const auto& m : golden::mtbench_messages()) {
    std::size_t i = 0;
    while (i < m.text.size()) {
      const char32_t c = util::utf8::next(m.text, i);
      if (c < seen.size() && !seen[c]) seen[c] = true, out.push_back(c);
    }
  }
  return out;
}

class PieceGenerator {
 public:
  explicit PieceGenerator(std::uint64_t seed) : rng_(seed), common_(mtbench_characters()) {}

  std::string next() {
    std::string s;
    const int shape = pick(10);
    const std::size_t length = shape < 5 ? 1 + pick(12) : shape < 8 ? 8 + pick(60) : 40 + pick(160);
    if (shape == 9 && pick(2) == 0) {
      // A run of one or two characters: no cut inside, so the heap merge does the work.
      const char32_t a = any_char(), b = pick(2) ? a : any_char();
      for (std::size_t k = 0; k < length; ++k) util::utf8::append(s, k % 3 == 2 ? b : a);
      return s;
    }
    while (util::utf8::count_code_points(s) < length) util::utf8::append(s, any_char());
    return s;
  }

 private:
  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  char32_t in(char32_t lo, char32_t hi) { return static_cast<char32_t>(lo + pick(hi - lo + 1)); }
  char32_t any_char() {
    switch (pick(12)) {
      case 0: case 1: case 2: case 3: return common_[pick(common_.size())];  // MT-Bench's own
      case 4: return in('a', 'z');
      case 5: return " \n\t.,!?'\"-_0123456789"[pick(20)];
      case 6: return in(0x3041, 0x30FF);   // kana
      case 7: return in(0x4E00, 0x9FFF);   // any CJK ideograph, many of them no token
      case 8: return in(0x20000, 0x2A6DF); // outside the BMP: byte splits and byte fallback
      case 9: return in(0x1F300, 0x1F6FF); // emoji
      case 10: return in(0x0300, 0x036F);  // combining marks
      default: return pick(2) ? in(0x0400, 0x04FF) : in(0xAC00, 0xD7A3);  // Cyrillic, Hangul
    }
  }
  std::mt19937_64 rng_;
  std::vector<char32_t> common_;
};

std::string ids_text(const std::vector<std::uint32_t>& ids) {
  std::string s;
  for (const auto id : ids) s += std::to_string(id) + " ";
  return s;
}

class NaiveBpeTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NaiveBpeTest, EveryMergePathEqualsTheReference) {
  const std::string& name = GetParam();
  const auto cached = Tokenizer::load(name, LoadOptions{""});
  ::setenv("OVERHEAD_BPE_CACHE", "0", 1);
  const auto uncached = Tokenizer::load(name, LoadOptions{""});
  ::unsetenv("OVERHEAD_BPE_CACHE");
  const BpeModel& with_cache = *cached->impl().model;
  const BpeModel& without_cache = *uncached->impl().model;
  const reference::NaiveBpe naive(cached->impl().file, with_cache.config().byte_level);

  PieceGenerator gen(0x5EED0000u + std::hash<std::string>{}(name) % 1000);
  constexpr int kPieces = 3000;
  int mismatches = 0;
  std::size_t long_pieces = 0;
  std::vector<std::string> seen;
  for (int k = 0; k < kPieces; ++k) {
    // One piece in eight repeats an earlier one, so caches answer across pieces too.
    const std::string piece = (k % 8 == 7 && !seen.empty()) ? seen[(k * 7919) % seen.size()] : gen.next();
    seen.push_back(piece);
    long_pieces += piece.size() > 64;
    const std::vector<std::uint32_t> want = naive.encode_piece(piece);
    for (int pass = 0; pass < 3; ++pass) {
      std::vector<std::uint32_t> got;
      (pass < 2 ? with_cache : without_cache).encode_piece(piece, got);
      if (got != want && ++mismatches <= golden::kMaxReported) {
        ADD_FAILURE() << name << ": piece " << k << " " << golden::excerpt(piece) << " (pass " << pass
                      << "): reference " << ids_text(want) << "\n  got " << ids_text(got);
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(long_pieces, kPieces / 10u) << "too few pieces long enough to be chunked";
}

INSTANTIATE_TEST_SUITE_P(Seeds, NaiveBpeTest, ::testing::Values("phi-4", "gemma-2-27b-it", "llama-3.3-70b-instruct"),
                         golden::gtest_name_of);

}  // namespace
}  // namespace overhead::tok
