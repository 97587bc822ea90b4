#include "tok/unicode_class.hpp"

#include <vector>

namespace overhead::tok::unicode {

namespace {

// General-category bits before they are folded into the public classes.
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

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// Built during static initialisation (before main) and immutable afterwards.
const std::vector<std::uint16_t>& table() {
  static const std::vector<std::uint16_t> t = [] {
    std::vector<std::uint16_t> v(0x110000, 0);
    for (const Range& r : kRanges)
      for (char32_t c = r.first; c <= r.last; ++c) v[c] |= r.category;
    for (char32_t c = 0; c < 0x110000; ++c) {
      std::uint16_t bits = v[c];
      if (bits & (kUpper | kLower | kTitle | kModifier | kOtherLetter)) bits |= kLetter | kWord;
      if (bits & kMark) bits |= kWord;
      if (bits & kDigit) bits |= kNumber | kWord;
      if (bits & kLetterNumber) bits |= kNumber | kWord;
      if (bits & kOtherNumber) bits |= kNumber;
      if (bits & kConnector) bits |= kWord;
      if (c == 0x200C || c == 0x200D) bits |= kWord;
      if (is_white_space(c)) bits |= kSpace;
      v[c] = bits & ~(kLetterNumber | kOtherNumber | kConnector);
    }
    return v;
  }();
  return t;
}

}  // namespace

namespace detail {
const std::uint16_t* const class_table = table().data();
}  // namespace detail

}  // namespace overhead::tok::unicode
