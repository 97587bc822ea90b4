#include "tok/unicode_class.hpp"

#include <utf8proc.h>

#include <vector>

namespace overhead::tok::unicode {

namespace {

bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

std::uint16_t compute(char32_t c) {
  std::uint16_t bits = is_white_space(c) ? kSpace : 0;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: bits |= kLetter | kUpper | kWord; break;
    case UTF8PROC_CATEGORY_LL: bits |= kLetter | kLower | kWord; break;
    case UTF8PROC_CATEGORY_LT: bits |= kLetter | kTitle | kWord; break;
    case UTF8PROC_CATEGORY_LM: bits |= kLetter | kModifier | kWord; break;
    case UTF8PROC_CATEGORY_LO: bits |= kLetter | kOtherLetter | kWord; break;
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME: bits |= kMark | kWord; break;
    case UTF8PROC_CATEGORY_ND: bits |= kNumber | kDigit | kWord; break;
    case UTF8PROC_CATEGORY_NL: bits |= kNumber | kWord; break;
    case UTF8PROC_CATEGORY_NO: bits |= kNumber; break;
    case UTF8PROC_CATEGORY_PC: bits |= kWord; break;
    default: break;
  }
  if (c == 0x200C || c == 0x200D) bits |= kWord;
  return bits;
}

// Built on first use (a magic static: thread-safe, once) and immutable afterwards.
const std::vector<std::uint16_t>& table() {
  static const std::vector<std::uint16_t> t = [] {
    std::vector<std::uint16_t> v(0x110000);
    for (char32_t c = 0; c < 0x110000; ++c) v[c] = compute(c);
    return v;
  }();
  return t;
}

}  // namespace

std::uint16_t classes(char32_t c) {
  static const std::uint16_t* const t = table().data();
  return c < 0x110000 ? t[c] : 0;
}

}  // namespace overhead::tok::unicode
