#include "tok/split_scanner.hpp"

#include <array>
#include <cstdint>
#include <cstring>

#include "tok/unicode_class.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

namespace {

const std::string kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

const std::string kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

using unicode::kLetter;
using unicode::kNumber;
using unicode::kSpace;

// The classes of the character at s[i] (valid UTF-8), its code point in c and its end in next.
// Decoded here, inline: the shared decoder was an out-of-line call per non-ASCII character.
[[gnu::always_inline]] inline std::uint16_t class_at(std::string_view s, std::size_t i, std::size_t& next, char32_t& c) {
  const auto b = static_cast<unsigned char>(s[i]);
  const auto cont = [&](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(s[i + k]) & 0x3Fu); };
  if (b < 0x80) {
    next = i + 1;
    c = b;
  } else if (b < 0xE0) {
    next = i + 2;
    c = ((b & 0x1Fu) << 6) | cont(1);
  } else if (b < 0xF0) {
    next = i + 3;
    c = ((b & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
  } else {
    next = i + 4;
    c = ((b & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
  }
  return unicode::classes(c);
}

inline bool is_newline(char32_t c) { return c == '\r' || c == '\n'; }
inline bool is_other(std::uint16_t k) { return (k & (kLetter | kNumber | kSpace)) == 0; }

// Length of a contraction ('s 't 're 've 'm 'll 'd, case-insensitive) at s[i] == '\'', or 0.
// Unicode case folding makes U+017F LATIN SMALL LETTER LONG S match 's' as well.
std::size_t contraction(std::string_view s, std::size_t i, std::size_t end) {
  std::size_t p = i + 1;
  if (p >= end) return 0;
  std::size_t q;
  char32_t c1;
  class_at(s, p, q, c1);
  switch (c1) {
    case 's': case 'S': case 't': case 'T': case 'm': case 'M': case 'd': case 'D': case 0x17F:
      return q - i;
    case 'r': case 'R': case 'v': case 'V': case 'l': case 'L': {
      if (q >= end) return 0;
      std::size_t r;
      char32_t c2;
      class_at(s, q, r, c2);
      const bool ok = (c1 == 'l' || c1 == 'L') ? (c2 == 'l' || c2 == 'L') : (c2 == 'e' || c2 == 'E');
      return ok ? r - i : 0;
    }
    default:
      return 0;
  }
}

// End of the run of characters in class `mask` starting at j.
std::size_t run_of(std::string_view s, std::size_t j, std::size_t end, std::uint16_t mask) {
  while (j < end) {
    std::size_t n;
    char32_t c;
    if (!(class_at(s, j, n, c) & mask)) break;
    j = n;
  }
  return j;
}

// \p{N}{1,3} at i (c0 already known to be a number): end of the match.
std::size_t numbers(std::string_view s, std::size_t i1, std::size_t end) {
  std::size_t j = i1;
  for (int taken = 1; taken < 3 && j < end; ++taken) {
    std::size_t n;
    char32_t c;
    if (!(class_at(s, j, n, c) & kNumber)) break;
    j = n;
  }
  return j;
}

// ' ?[^\s\p{L}\p{N}]+' followed by any of `trailing` (newlines, and '/' for o200k): end of the
// match, or 0 when it does not match at i.
std::size_t punctuation(std::string_view s, std::size_t i, std::size_t i1, char32_t c0, std::uint16_t k0,
                        std::size_t end, bool slash_too) {
  std::size_t p;
  if (is_other(k0)) {
    p = i;
  } else if (c0 == ' ' && i1 < end) {
    std::size_t n;
    char32_t c;
    if (!is_other(class_at(s, i1, n, c))) return 0;
    p = i1;
  } else {
    return 0;
  }
  std::size_t j = p;
  while (j < end) {
    std::size_t n;
    char32_t c;
    if (!is_other(class_at(s, j, n, c))) break;
    j = n;
  }
  while (j < end && (s[j] == '\r' || s[j] == '\n' || (slash_too && s[j] == '/'))) ++j;
  return j;
}

// \s*[\r\n]+ | \s+(?!\S) | \s+ at i (c0 is whitespace): end of the match.
std::size_t whitespace(std::string_view s, std::size_t i, std::size_t end) {
  std::size_t j = i, last_newline_end = 0, last_char_start = i;
  while (j < end) {
    std::size_t n;
    char32_t c;
    if (!(class_at(s, j, n, c) & kSpace)) break;
    if (is_newline(c)) last_newline_end = n;
    last_char_start = j;
    j = n;
  }
  if (last_newline_end) return last_newline_end;        // ends after the run's last newline
  if (j == end || last_char_start == i) return j;        // \s+(?!\S) at the end, or one \s
  return last_char_start;  // \s+(?!\S): leave the last space to prefix the next word
}

// The loop both scanners share: per piece, the pattern's letter alternatives (`letters(i, i1, c0,
// k0)`: the end, or 0 when none matches), then \p{N}{1,3}, then the punctuation run (o200k also
// takes '/' into its trailing [\r\n]*), then whitespace.
template <class Letters>
inline std::size_t piece_end(std::string_view s, std::size_t i, std::size_t end, bool slash_after_punctuation,
                             Letters&& letters) {
  std::size_t i1;
  char32_t c0;
  const std::uint16_t k0 = class_at(s, i, i1, c0);
  std::size_t stop = letters(i, i1, c0, k0);
  // \p{N}{1,3}
  if (!stop && (k0 & kNumber)) stop = numbers(s, i1, end);
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*' (o200k: [\r\n/]*)
  if (!stop) stop = punctuation(s, i, i1, c0, k0, end, slash_after_punctuation);
  // whitespace: c0 is \s here (every other class was taken above).
  if (!stop) stop = whitespace(s, i, end);
  return stop;
}

template <class Letters>
std::size_t scan_pieces(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out, std::size_t max,
                        bool slash_after_punctuation, Letters&& letters) {
  std::size_t i = begin;
  for (std::size_t found = 0; i < end && found < max; ++found) {
    const std::size_t stop = piece_end(s, i, end, slash_after_punctuation, letters);
    out.emplace_back(i, stop);
    i = stop;
  }
  return i;
}

// ASCII's classes for the cl100k scanner's fast path, one load per byte: the same as the Unicode
// table's (a test holds the two together) with the newlines and the apostrophe apart.
enum AsciiKind : std::uint8_t {
  kAsciiLetter = 1,
  kAsciiDigit = 2,
  kAsciiSpace = 4,    // \s other than \r \n: \t \v \f ' '
  kAsciiNewline = 8,  // \r \n
  kAsciiOther = 16,   // [^\s\p{L}\p{N}], the apostrophe included
};

constexpr std::array<std::uint8_t, 128> make_ascii_kinds() {
  std::array<std::uint8_t, 128> k{};
  for (int c = 0; c < 128; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) k[c] = kAsciiLetter;
    else if (c >= '0' && c <= '9') k[c] = kAsciiDigit;
    else if (c == '\r' || c == '\n') k[c] = kAsciiNewline;
    else if (c == ' ' || (c >= 0x09 && c <= 0x0C)) k[c] = kAsciiSpace;
    else k[c] = kAsciiOther;
  }
  return k;
}
constexpr std::array<std::uint8_t, 128> kAsciiKinds = make_ascii_kinds();

// End of the run of characters in class `mask` (`ascii_mask` for ASCII bytes) from j: ASCII bytes
// with one table load each, the rest through the Unicode table.
inline std::size_t run_fast(std::string_view s, std::size_t j, std::size_t end, std::uint8_t ascii_mask,
                            std::uint16_t mask) {
  const char* p = s.data();
  while (j < end) {
    const auto b = static_cast<unsigned char>(p[j]);
    if (b < 0x80) {
      if (!(kAsciiKinds[b] & ascii_mask)) break;
      ++j;
      continue;
    }
    std::size_t n;
    char32_t c;
    if (!(class_at(s, j, n, c) & mask)) break;
    j = n;
  }
  return j;
}

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHigh = 0x8080808080808080ULL;

// The high bit of each of the eight bytes of w (all ASCII) that is not a letter. A byte b < 0x80
// is an ASCII letter when (b | 0x20) is in 'a'..'z'; with every byte below 0x80, the two byte-wise
// additions below cannot carry into the next byte.
inline std::uint64_t non_letters(std::uint64_t w) {
  const std::uint64_t x = w | (0x20 * kOnes);
  const std::uint64_t letter = (x + 0x1F * kOnes) & ~(x + 0x05 * kOnes) & kHigh;
  return ~letter & kHigh;
}

// End of the run of letters from j: eight ASCII bytes at a time while they are all ASCII, then
// run_fast.
[[gnu::noinline]] std::size_t letters_rest(std::string_view s, std::size_t j, std::size_t end) {
  const char* p = s.data();
  while (j + 8 <= end) {
    std::uint64_t w;
    std::memcpy(&w, p + j, 8);
    if (w & kHigh) break;
    if (const std::uint64_t other = non_letters(w)) return j + static_cast<std::size_t>(__builtin_ctzll(other) >> 3);
    j += 8;
  }
  return run_fast(s, j, end, kAsciiLetter, kLetter);
}

// Inline in the piece loop: most words end within their first eight bytes.
[[gnu::always_inline]] inline std::size_t letters_fast(std::string_view s, std::size_t j, std::size_t end) {
  if (j + 8 <= end) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + j, 8);
    if (!(w & kHigh)) {
      if (const std::uint64_t other = non_letters(w)) return j + static_cast<std::size_t>(__builtin_ctzll(other) >> 3);
    }
  }
  return letters_rest(s, j, end);
}

// The cl100k piece at s[i] when s[i] is ASCII (the same alternatives as the generic letters
// lambda of scan_cl100k, then numbers, punctuation and whitespace, decided on ASCII kinds).
inline std::size_t cl100k_ascii_piece(std::string_view s, std::size_t i, std::size_t end) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  const std::uint8_t k0 = kAsciiKinds[b0];
  if (k0 == kAsciiLetter) return letters_fast(s, i + 1, end);
  if (k0 == kAsciiDigit) {
    // \p{N}{1,3}
    std::size_t j = i + 1;
    for (int taken = 1; taken < 3 && j < end; ++taken) {
      const auto b = static_cast<unsigned char>(s[j]);
      if (b < 0x80) {
        if (kAsciiKinds[b] != kAsciiDigit) break;
        ++j;
        continue;
      }
      std::size_t n;
      char32_t c;
      if (!(class_at(s, j, n, c) & kNumber)) break;
      j = n;
    }
    return j;
  }
  if (k0 == kAsciiNewline) return whitespace(s, i, end);
  // Other or a space: a contraction, else [^\r\n\p{L}\p{N}]\p{L}+ (the next character a letter).
  if (b0 == '\'') {
    if (const std::size_t n = contraction(s, i, end)) return i + n;
  }
  const std::size_t i1 = i + 1;
  std::uint8_t k1 = 0;  // the next byte's kind when ASCII; 0 when non-ASCII or at the end
  if (i1 < end) {
    const auto b1 = static_cast<unsigned char>(s[i1]);
    if (b1 < 0x80) {
      k1 = kAsciiKinds[b1];
      if (k1 == kAsciiLetter) return letters_fast(s, i1 + 1, end);
    } else {
      std::size_t n;
      char32_t c;
      const std::uint16_t cls = class_at(s, i1, n, c);
      if (cls & kLetter) return letters_fast(s, n, end);
      if (is_other(cls)) k1 = kAsciiOther;
    }
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  if (k0 == kAsciiOther || (b0 == ' ' && k1 == kAsciiOther)) {
    const std::size_t p = k0 == kAsciiOther ? i : i1;
    std::size_t j = run_fast(s, p, end, kAsciiOther, static_cast<std::uint16_t>(0));
    // run_fast stops at a non-ASCII byte whose class has none of the mask's bits; punctuation
    // runs on through non-ASCII characters of no class among L, N, \s.
    while (j < end) {
      std::size_t n;
      char32_t c;
      if (!is_other(class_at(s, j, n, c))) break;
      j = n;
      j = run_fast(s, j, end, kAsciiOther, static_cast<std::uint16_t>(0));
    }
    while (j < end && (s[j] == '\r' || s[j] == '\n')) ++j;
    return j;
  }
  return whitespace(s, i, end);
}

// The cl100k pattern's letter alternatives at i: the end, or 0 when none matches.
std::size_t cl100k_letters(std::string_view s, std::size_t i, std::size_t i1, char32_t c0, std::uint16_t k0,
                           std::size_t end) {
  // 1. contractions
  if (c0 == '\'') {
    if (const std::size_t n = contraction(s, i, end)) return i + n;
  }
  // 2. [^\r\n\p{L}\p{N}]?\p{L}+
  std::size_t j = 0;
  if (k0 & kLetter) {
    j = i1;
  } else if (!(k0 & kNumber) && !is_newline(c0) && i1 < end) {
    std::size_t i2;
    char32_t c1;
    if (class_at(s, i1, i2, c1) & kLetter) j = i2;
  }
  return j ? run_of(s, j, end, kLetter) : 0;
}

std::size_t scan_cl100k(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out, std::size_t max) {
  // ASCII-led pieces (nearly all of English, code, and the spaces and punctuation of every text)
  // take the fast path; the others the generic one, one piece at a time.
  auto generic = [&](std::size_t i, std::size_t i1, char32_t c0, std::uint16_t k0) -> std::size_t {
    return cl100k_letters(s, i, i1, c0, k0, end);
  };
  std::size_t i = begin;
  for (std::size_t found = 0; i < end && found < max; ++found) {
    const std::size_t stop = static_cast<unsigned char>(s[i]) < 0x80 ? cl100k_ascii_piece(s, i, end)
                                                                     : piece_end(s, i, end, false, generic);
    out.emplace_back(i, stop);
    i = stop;
  }
  return i;
}

// o200k's letter alternatives, with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] (they share Lm, Lo and M, which is where backtracking matters).
constexpr std::uint16_t kU = unicode::kUpper | unicode::kTitle | unicode::kModifier | unicode::kOtherLetter | unicode::kMark;
constexpr std::uint16_t kW = unicode::kLower | unicode::kModifier | unicode::kOtherLetter | unicode::kMark;

std::size_t with_contraction(std::string_view s, std::size_t e, std::size_t end) {
  if (e < end && s[e] == '\'') return e + contraction(s, e, end);
  return e;
}

// U*W+ from j, as a backtracking engine would settle it: U* takes the longest prefix of the U run
// after which a W char follows; W+ then runs greedily. Returns the end, or 0 when nothing matches.
std::size_t upper_then_lower(std::string_view s, std::size_t j, std::size_t end) {
  const std::size_t k = run_of(s, j, end, kU);
  if (k < end) {
    std::size_t n;
    char32_t c;
    if (class_at(s, k, n, c) & kW) return with_contraction(s, run_of(s, n, end, kW), end);
  }
  // Give back U chars from the right until one of them is also a W char.
  std::size_t p = k;
  while (p > j) {
    std::size_t start;
    const char32_t c = util::utf8::previous(s, p, start);
    if (unicode::classes(c) & kW) return with_contraction(s, p, end);  // W+ is that one char
    p = start;
  }
  return 0;
}

// U+W* from j: the end, or 0 when j does not start a U char.
std::size_t upper_run(std::string_view s, std::size_t j, std::size_t end) {
  const std::size_t k = run_of(s, j, end, kU);
  if (k == j) return 0;
  return with_contraction(s, run_of(s, k, end, kW), end);
}

std::size_t scan_o200k(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out, std::size_t max) {
  return scan_pieces(s, begin, end, out, max, true, [&](std::size_t i, std::size_t i1, char32_t c0, std::uint16_t k0) -> std::size_t {
    const bool prefix = !(k0 & (kLetter | kNumber)) && !is_newline(c0);  // [^\r\n\p{L}\p{N}]
    std::size_t stop = 0;
    // 1. P? U* W+ '?   (with P first, then without)
    if (prefix && i1 < end) stop = upper_then_lower(s, i1, end);
    if (!stop) stop = upper_then_lower(s, i, end);
    // 2. P? U+ W* '?
    if (!stop && prefix && i1 < end) stop = upper_run(s, i1, end);
    if (!stop) stop = upper_run(s, i, end);
    return stop;
  });
}

}  // namespace

std::optional<ScannerKind> scanner_for(const std::string& pattern) {
  if (pattern == kCl100kPattern) return ScannerKind::kCl100k;
  if (pattern == kO200kPattern) return ScannerKind::kO200k;
  return std::nullopt;
}

const std::string& scanner_pattern(ScannerKind kind) {
  return kind == ScannerKind::kO200k ? kO200kPattern : kCl100kPattern;
}

std::size_t scan(ScannerKind kind, std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out,
                 std::size_t max) {
  switch (kind) {
    case ScannerKind::kCl100k: return scan_cl100k(s, begin, end, out, max);
    case ScannerKind::kO200k: return scan_o200k(s, begin, end, out, max);
  }
  return end;
}

}  // namespace overhead::tok
