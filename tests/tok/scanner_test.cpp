// The hand-written pre-tokenizer scanners must find exactly the matches of the regex they
// replace. PCRE2 is the reference here; it knows Unicode 14, so the generated strings draw from
// characters whose class is the same in Unicode 14 and in the scanners' (newer) table.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tok/regex.hpp"
#include "tok/split_scanner.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {
namespace {

// Characters that exercise every branch: ASCII letters and digits, apostrophes and contraction
// letters (including U+017F, which case-folds to 's'), every kind of whitespace, punctuation,
// '/', CJK, kana, Latin with marks (combining and precomposed), title case, modifier letters,
// other numbers, emoji.
const std::vector<std::string> kAlphabet = {
    "a", "b", "s", "t", "r", "e", "v", "l", "m", "d", "S", "T", "R", "E", "L", "D", "'", "\xC5\xBF",
    "0", "7", "9", " ", "  ", "\t", "\n", "\r", "\r\n", "\xC2\xA0", "\xE3\x80\x80", "\xE2\x80\x83",
    ".", ",", "!", "?", "/", "-", "(", ")", "\"", "#", "_", "\xE3\x80\x81", "\xE3\x80\x82",
    "\xE6\x97\xA5", "\xE6\x9C\xAC", "\xE3\x81\x82", "\xE3\x82\xA2", "\xE3\x83\xBC",  // 日 本 あ ア ー
    "\xC3\xA9", "e\xCC\x81", "\xCC\x81", "\xC7\x85", "\xCA\xB0", "\xC2\xB2", "\xE2\x85\xA0",  // é e◌́ ◌́ ǅ ʰ ² Ⅰ
    "\xC3\x89", "\xD0\x96", "\xD0\xB6", "\xCE\xA9", "\xCF\x89", "\xD8\xB3", "\xE0\xA4\x95\xE0\xA5\x8D",
    "\xF0\x9F\x98\x80", "\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", "\xE2\x80\x8D", "\xEF\xBB\xBF",
};

std::string random_text(std::mt19937& rng, std::size_t pieces) {
  std::uniform_int_distribution<std::size_t> pick(0, kAlphabet.size() - 1);
  std::string s;
  for (std::size_t k = 0; k < pieces; ++k) s += kAlphabet[pick(rng)];
  return s;
}

void expect_same_as_regex(ScannerKind kind) {
  const Regex reference(scanner_pattern(kind));
  std::mt19937 rng(20261202);
  std::vector<Span> expected, got;
  for (int round = 0; round < 20000; ++round) {
    const std::string text = random_text(rng, 1 + round % 40);
    ASSERT_TRUE(util::utf8::is_valid(text));
    expected.clear();
    got.clear();
    reference.find_all(text, 0, text.size(), expected);
    scan(kind, text, 0, text.size(), got);
    ASSERT_EQ(expected, got) << "text: \"" << text << "\"";
  }
}

TEST(ScannerTest, Cl100kMatchesPcre2) { expect_same_as_regex(ScannerKind::kCl100k); }

// The cl100k scanner's ASCII fast path classifies bytes with a table of its own: every ASCII
// character (controls, \v, \f, DEL included), mixed with a few non-ASCII letters, spaces, numbers
// and punctuation, against PCRE2.
TEST(ScannerTest, Cl100kMatchesPcre2OnEveryAsciiCharacter) {
  const Regex reference(scanner_pattern(ScannerKind::kCl100k));
  const std::vector<std::string> extra = {"\xC3\xA9", "\xE6\x97\xA5", "\xC2\xA0", "\xE3\x80\x80", "\xC2\xB2",
                                          "\xE3\x80\x81", "\xC5\xBF", "\xF0\x9F\x98\x80", "\xCC\x81"};
  std::mt19937 rng(20261207);
  std::uniform_int_distribution<int> ascii(1, 127), pick_extra(0, static_cast<int>(extra.size()) - 1), coin(0, 7);
  std::vector<Span> expected, got;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    for (int k = 0; k < 1 + round % 30; ++k) {
      if (coin(rng) == 0) text += extra[pick_extra(rng)];
      else text.push_back(static_cast<char>(ascii(rng)));
    }
    expected.clear();
    got.clear();
    reference.find_all(text, 0, text.size(), expected);
    scan(ScannerKind::kCl100k, text, 0, text.size(), got);
    ASSERT_EQ(expected, got) << "text: \"" << text << "\"";
  }
}
TEST(ScannerTest, O200kMatchesPcre2) { expect_same_as_regex(ScannerKind::kO200k); }

// Longer texts than the tests above: runs of letters, digits, spaces, newlines and punctuation
// from one to 140 characters (the ASCII fast path reads letters eight bytes at a time), cut by
// contractions and by non-ASCII characters that may or may not continue a run; scanned whole and
// in parts of a few matches, against PCRE2.
TEST(ScannerTest, Cl100kMatchesPcre2OnLongRuns) {
  const Regex reference(scanner_pattern(ScannerKind::kCl100k));
  const std::vector<std::string> runs_of = {"a", "Z", "7", " ", "\t", "\n", "\r", ".", "'", "-", "\v"};
  const std::vector<std::string> singles = {"'s", "'LL", "'re", "'ve", "'d", "'x", "\xC5\xBF", "\xC3\xA9", "\xE6\x97\xA5",
                                            "\xC2\xA0", "\xE3\x80\x80", "\xD9\xA3", "\xE2\x80\x94", "\xC2\xB2", "\r\n"};
  std::mt19937 rng(20261207);
  std::uniform_int_distribution<std::size_t> pick_run(0, runs_of.size() - 1), pick_single(0, singles.size() - 1);
  std::uniform_int_distribution<int> length(1, 9), long_run(60, 140), coin(0, 9), parts(1, 5);
  std::vector<Span> expected, got;
  for (int round = 0; round < 6000; ++round) {
    std::string text;
    while (text.size() < static_cast<std::size_t>(40 + round % 260)) {
      const int c = coin(rng);
      if (c == 0) {
        text += singles[pick_single(rng)];
      } else {
        const std::string& r = runs_of[pick_run(rng)];
        for (int k = c == 1 ? long_run(rng) : length(rng); k > 0; --k) text += r;
      }
    }
    expected.clear();
    got.clear();
    reference.find_all(text, 0, text.size(), expected);
    scan(ScannerKind::kCl100k, text, 0, text.size(), got);
    ASSERT_EQ(expected, got) << "text: \"" << text << "\"";
    got.clear();
    for (std::size_t pos = 0; pos < text.size();) pos = scan(ScannerKind::kCl100k, text, pos, text.size(), got, parts(rng));
    ASSERT_EQ(expected, got) << "in parts, text: \"" << text << "\"";
  }
}

TEST(ScannerTest, RecognisesOnlyItsExactPatterns) {
  EXPECT_EQ(scanner_for(scanner_pattern(ScannerKind::kCl100k)), ScannerKind::kCl100k);
  EXPECT_EQ(scanner_for(scanner_pattern(ScannerKind::kO200k)), ScannerKind::kO200k);
  EXPECT_FALSE(scanner_for(scanner_pattern(ScannerKind::kCl100k) + "|x"));
}

TEST(ScannerTest, TilesTheInput) {
  std::mt19937 rng(7);
  std::vector<Span> spans;
  for (int round = 0; round < 2000; ++round) {
    const std::string text = random_text(rng, 30);
    for (ScannerKind kind : {ScannerKind::kCl100k, ScannerKind::kO200k}) {
      spans.clear();
      scan(kind, text, 0, text.size(), spans);
      std::size_t pos = 0;
      for (const auto& [b, e] : spans) {
        ASSERT_EQ(b, pos);
        ASSERT_LT(b, e);
        pos = e;
      }
      ASSERT_EQ(pos, text.size());
    }
  }
}

}  // namespace
}  // namespace overhead::tok
