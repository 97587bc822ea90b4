// Unicode character classes the pre-tokenizer patterns ask about (\p{L}, \p{N}, \s, the letter
// sub-categories of o200k's pattern, \w), answered from one table of 0x110000 entries, so the
// hand-written scanners classify a code point with a single load. The table is read-only data
// expanded at build time (unicode_table_gen) from generated ranges (unicode_ranges.inc) and
// embedded in the library: a process pays nothing for it at start, and only the pages of the
// scripts it meets are ever read. The ranges follow current Unicode, as HF tokenizers' Oniguruma does.
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

inline constexpr char32_t kCodePoints = 0x110000;

namespace detail {
// The embedded table (unicode_class.cpp), under a fixed assembler name; hidden, so every lookup is
// one PC-relative load even when the library is built position-independent.
extern __attribute__((visibility("hidden"))) const std::uint16_t class_table[kCodePoints] __asm__(
    "overhead_tok_unicode_class_table");
}  // namespace detail

// The class bits of code point c (0 for c > 0x10FFFF).
inline std::uint16_t classes(char32_t c) { return c < kCodePoints ? detail::class_table[c] : 0; }

inline bool is(char32_t c, std::uint16_t mask) { return (classes(c) & mask) != 0; }

}  // namespace overhead::tok::unicode
