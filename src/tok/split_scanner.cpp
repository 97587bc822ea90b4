#include "tok/split_scanner.hpp"

#include "tok/unicode_class.hpp"
#include "tok/utf8.hpp"

namespace overhead::tok {

namespace {

const std::string kCl100kPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

using unicode::kLetter;
using unicode::kNumber;
using unicode::kSpace;

// Classes of the ASCII range, looked up without touching the big table.
struct AsciiClasses {
  std::uint16_t bits[128];
  AsciiClasses() {
    for (char32_t c = 0; c < 128; ++c) bits[c] = unicode::classes(c);
  }
};

inline std::uint16_t class_at(std::string_view s, std::size_t i, std::size_t& next, char32_t& c) {
  static const AsciiClasses ascii;
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    next = i + 1;
    c = b;
    return ascii.bits[b];
  }
  next = i;
  c = utf8::next(s, next);
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

void scan_cl100k(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out) {
  std::size_t i = begin;
  while (i < end) {
    std::size_t i1;
    char32_t c0;
    const std::uint16_t k0 = class_at(s, i, i1, c0);

    // 1. contractions
    if (c0 == '\'') {
      if (const std::size_t n = contraction(s, i, end)) {
        out.emplace_back(i, i + n);
        i += n;
        continue;
      }
    }
    // 2. [^\r\n\p{L}\p{N}]?\p{L}+
    {
      std::size_t j = 0;
      if (k0 & kLetter) {
        j = i1;
      } else if (!(k0 & kNumber) && !is_newline(c0) && i1 < end) {
        std::size_t i2;
        char32_t c1;
        if (class_at(s, i1, i2, c1) & kLetter) j = i2;
      }
      if (j) {
        while (j < end) {
          std::size_t n;
          char32_t c;
          if (!(class_at(s, j, n, c) & kLetter)) break;
          j = n;
        }
        out.emplace_back(i, j);
        i = j;
        continue;
      }
    }
    // 3. \p{N}{1,3}
    if (k0 & kNumber) {
      std::size_t j = i1;
      for (int taken = 1; taken < 3 && j < end; ++taken) {
        std::size_t n;
        char32_t c;
        if (!(class_at(s, j, n, c) & kNumber)) break;
        j = n;
      }
      out.emplace_back(i, j);
      i = j;
      continue;
    }
    // 4. ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    {
      constexpr std::size_t kNoRun = ~std::size_t{0};
      std::size_t p = kNoRun;  // start of the [^\s\p{L}\p{N}]+ run
      if (is_other(k0)) {
        p = i;
      } else if (c0 == ' ' && i1 < end) {
        std::size_t n;
        char32_t c;
        if (is_other(class_at(s, i1, n, c))) p = i1;
      }
      if (p != kNoRun) {
        std::size_t j = p;
        while (j < end) {
          std::size_t n;
          char32_t c;
          if (!is_other(class_at(s, j, n, c))) break;
          j = n;
        }
        while (j < end && (s[j] == '\r' || s[j] == '\n')) ++j;
        out.emplace_back(i, j);
        i = j;
        continue;
      }
    }
    // 5-7. whitespace: c0 is \s here (every other class was taken above).
    std::size_t j = i, last_newline_end = 0, last_char_start = i;
    while (j < end) {
      std::size_t n;
      char32_t c;
      if (!(class_at(s, j, n, c) & kSpace)) break;
      if (is_newline(c)) last_newline_end = n;
      last_char_start = j;
      j = n;
    }
    std::size_t stop;
    if (last_newline_end) {
      stop = last_newline_end;  // \s*[\r\n]+ ends after the run's last newline
    } else if (j == end || last_char_start == i) {
      stop = j;  // \s+(?!\S) at the end of input, or \s+ for a single whitespace char
    } else {
      stop = last_char_start;  // \s+(?!\S): leave the last space to prefix the next word
    }
    out.emplace_back(i, stop);
    i = stop;
  }
}

}  // namespace

std::optional<ScannerKind> scanner_for(const std::string& pattern) {
  if (pattern == kCl100kPattern) return ScannerKind::kCl100k;
  return std::nullopt;
}

const std::string& scanner_pattern(ScannerKind kind) {
  switch (kind) {
    case ScannerKind::kCl100k: return kCl100kPattern;
  }
  return kCl100kPattern;
}

void scan(ScannerKind kind, std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out) {
  switch (kind) {
    case ScannerKind::kCl100k: scan_cl100k(s, begin, end, out); return;
  }
}

}  // namespace overhead::tok
