// The class table embedded at build time answers what the generated ranges say: every code point
// of a general-category range has that category's class bits (and the classes it implies), and no
// code point has a category bit that no range gives it. Also the fixed points the patterns rely on
// (ASCII, White_Space, ZWNJ/ZWJ in \w, nothing above U+10FFFF).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tok/unicode_class.hpp"

namespace overhead::tok::unicode {
namespace {

// The ranges file's own categories; the three folded ones only imply public classes.
enum Category : std::uint16_t {
  kLetterNumber = 1 << 12,
  kOtherNumber = 1 << 13,
  kConnector = 1 << 14,
};

struct Range {
  char32_t first;
  char32_t last;
  std::uint16_t category;
};

constexpr Range kRanges[] = {
#include "tok/unicode_ranges.inc"
};

// What a category implies in the public classes (unicode_class.hpp's comments).
std::uint16_t implied(std::uint16_t category) {
  switch (category) {
    case kUpper: case kLower: case kTitle: case kModifier: case kOtherLetter:
      return static_cast<std::uint16_t>(category | kLetter | kWord);
    case kMark: return kMark | kWord;
    case kDigit: return kDigit | kNumber | kWord;
    case kLetterNumber: return kNumber | kWord;
    case kOtherNumber: return kNumber;
    case kConnector: return kWord;
    default: return 0;
  }
}

TEST(UnicodeClass, EveryRangedCodePointHasItsClasses) {
  std::vector<std::uint16_t> expected(kCodePoints, 0);
  for (const Range& r : kRanges)
    for (char32_t c = r.first; c <= r.last; ++c) expected[c] |= implied(r.category);
  constexpr std::uint16_t kCategoryBits = kUpper | kLower | kTitle | kModifier | kOtherLetter | kMark | kDigit;
  std::size_t mismatches = 0;
  for (char32_t c = 0; c < kCodePoints; ++c) {
    const std::uint16_t got = classes(c);
    // Category bits exactly as the ranges give them; derived bits at least as they imply.
    const bool ok = (got & kCategoryBits) == (expected[c] & kCategoryBits) && (got & expected[c]) == expected[c];
    if (!ok && ++mismatches <= 10) ADD_FAILURE() << std::hex << "U+" << static_cast<std::uint32_t>(c) << ": got " << got
                                                 << ", ranges say " << expected[c];
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(UnicodeClass, FixedPoints) {
  EXPECT_EQ(classes('A'), kUpper | kLetter | kWord);
  EXPECT_EQ(classes('z'), kLower | kLetter | kWord);
  EXPECT_EQ(classes('7'), kDigit | kNumber | kWord);
  EXPECT_EQ(classes('_'), kWord);
  EXPECT_EQ(classes('!'), 0);
  for (char32_t c : {U'\t', U'\n', U'\v', U'\f', U'\r', U' ', U'\u0085', U'\u00A0', U'\u1680', U'\u2000', U'\u200A',
                     U'\u2028', U'\u2029', U'\u202F', U'\u205F', U'\u3000'})
    EXPECT_TRUE(is(c, kSpace)) << static_cast<std::uint32_t>(c);
  EXPECT_FALSE(is(U'\u200B', kSpace));  // ZERO WIDTH SPACE is not White_Space
  EXPECT_TRUE(is(U'\u200C', kWord));
  EXPECT_TRUE(is(U'\u200D', kWord));
  EXPECT_TRUE(is(U'\u3042', kOtherLetter));  // あ
  EXPECT_TRUE(is(U'\U0001D7CE', kDigit));   // MATHEMATICAL BOLD DIGIT ZERO, beyond the BMP
  EXPECT_EQ(classes(0x110000), 0);
  EXPECT_EQ(classes(0xFFFFFFFF), 0);
}

}  // namespace
}  // namespace overhead::tok::unicode
