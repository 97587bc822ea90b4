// The one UTF-8 unit: decoding and encoding code points, validation, the documented repair of
// invalid input, and counting. The tokenizer (tok/), the template engine (chat/), the pipeline's
// prompt counters (pipe/) and the JSON string escaper (json_writer.hpp) all use it.
//
// Two decoders, because the project meets two kinds of input:
//   - next()/previous(): for text already known to be valid (the tokenizer repairs its input
//     first, every JSON parser here validates), the fast path with no checks;
//   - next_lenient(): for text that may not be valid, decoding an ill-formed byte as itself
//     (Latin-1 style) instead of failing, so the template engine never reads past the end.
// The repair (each maximal invalid subsequence becomes U+FFFD, as Rust's from_utf8_lossy and
// Python's decode("utf-8", "replace") do) is what the tokenizer promises to apply.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace overhead::util::utf8 {

// Length of the UTF-8 sequence starting with lead byte `b` (1 for ASCII and for invalid leads).
inline std::size_t sequence_length(unsigned char b) {
  if (b < 0x80) return 1;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

inline bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Decodes the code point at s[i] of VALID UTF-8 and advances i past it.
inline char32_t next(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  if (b0 < 0xE0) {
    const char32_t c = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
    i += 2;
    return c;
  }
  if (b0 < 0xF0) {
    const char32_t c = ((b0 & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                       (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
    i += 3;
    return c;
  }
  const char32_t c = ((b0 & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
                     ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) |
                     (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
  i += 4;
  return c;
}

// Decodes the code point that ends just before s[end] (valid UTF-8); sets `start` to its first byte.
inline char32_t previous(std::string_view s, std::size_t end, std::size_t& start) {
  start = end - 1;
  while (start > 0 && is_continuation(static_cast<unsigned char>(s[start]))) --start;
  std::size_t i = start;
  return next(s, i);
}

// Decodes the code point at s[i] of text that may be ill-formed and advances i past it: a lead
// byte with its continuation bytes present decodes as UTF-8 (bit patterns only: overlongs and
// surrogates are not rejected); any other byte decodes as itself and advances by one. Never
// reads past the end of s.
char32_t next_lenient(std::string_view s, std::size_t& i);

// Appends the UTF-8 encoding of code point c (c <= U+10FFFF).
void append(std::string& out, char32_t c);

// Length of the valid prefix of s (== s.size() when all of it is valid UTF-8).
std::size_t valid_prefix(std::string_view s);
inline bool is_valid(std::string_view s) { return valid_prefix(s) == s.size(); }
// s with every maximal invalid subsequence replaced by U+FFFD.
std::string repair(std::string_view s);
// The first at most `max_bytes` bytes of s, cut before a character the cut would split (a byte
// budget for a message or a log line must not leave half a character behind). Bytes that are no
// part of a valid character are kept as they are: repair() is what makes them valid.
std::string_view truncate(std::string_view s, std::size_t max_bytes);
// Text from outside (an engine's error body, a broker's message) made fit for JSON and for people:
// at most `max_bytes` bytes cut on a character boundary, then repaired.
inline std::string excerpt(std::string_view s, std::size_t max_bytes) { return repair(truncate(s, max_bytes)); }

// Code points of VALID UTF-8 (the bytes that are not continuation bytes).
std::size_t count_code_points(std::string_view valid);
// Code points as next_lenient() decodes them (equal to count_code_points on valid UTF-8).
std::size_t count_lenient(std::string_view s);

}  // namespace overhead::util::utf8
