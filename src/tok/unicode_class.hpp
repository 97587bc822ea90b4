// Unicode character classes the pre-tokenizer patterns ask about (\p{L}, \p{N}, \s, the letter
// sub-categories of o200k's pattern, \w), answered from one table built once at start-up from
// generated ranges (unicode_ranges.inc), so the hand-written scanners classify a code point with a
// single load. The ranges follow current Unicode, as HF tokenizers' Oniguruma does.
#pragma once

#include <cstdint>

namespace overhead::tok::unicode {

enum Class : std::uint16_t {
  kLetter = 1 << 0,    // \p{L}
  kNumber = 1 << 1,    // \p{N}
  kSpace = 1 << 2,     // \s: Unicode White_Space (what Oniguruma, PCRE2-UCP and Rust agree on)
  kUpper = 1 << 3,     // \p{Lu}
  kLower = 1 << 4,     // \p{Ll}
  kTitle = 1 << 5,     // \p{Lt}
  kModifier = 1 << 6,  // \p{Lm}
  kOtherLetter = 1 << 7,  // \p{Lo}
  kMark = 1 << 8,      // \p{M}
  kWord = 1 << 9,      // \w: L, M, Nd, Nl, Pc, ZWNJ/ZWJ
  kDigit = 1 << 10,    // \p{Nd}
};

namespace detail {
// The table, filled during static initialisation (before main), so lookups need no guard.
extern const std::uint16_t* const class_table;
}  // namespace detail

// The class bits of code point c (0 for c > 0x10FFFF).
inline std::uint16_t classes(char32_t c) { return c < 0x110000 ? detail::class_table[c] : 0; }

inline bool is(char32_t c, std::uint16_t mask) { return (classes(c) & mask) != 0; }

}  // namespace overhead::tok::unicode
