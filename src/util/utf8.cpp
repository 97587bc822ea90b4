#include "util/utf8.hpp"

namespace overhead::util::utf8 {

void append(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

namespace {

// Length of the valid sequence at s[i], or 0 when invalid; `maximal` gets the length of the
// maximal subpart of an invalid sequence (the bytes one U+FFFD replaces, per Unicode 3.9 / W3C).
std::size_t check_at(std::string_view s, std::size_t i, std::size_t& maximal) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  maximal = 1;
  if (b0 < 0x80) return 1;
  std::size_t need;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;  // no surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (std::size_t k = 1; k < need; ++k) {
    if (i + k >= s.size()) return 0;
    const auto b = static_cast<unsigned char>(s[i + k]);
    const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
    maximal = k + 1;
  }
  return need;
}

}  // namespace

std::size_t valid_prefix(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t maximal;
    const std::size_t n = check_at(s, i, maximal);
    if (n == 0) return i;
    i += n;
  }
  return i;
}

std::string repair(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t maximal;
    const std::size_t n = check_at(s, i, maximal);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i += maximal;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

std::string_view truncate(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  // s[max_bytes] is the first byte left out. When it continues a character, that character's lead
  // is at most 3 bytes back; the character is left out whole when it would run past the cut.
  std::size_t lead = max_bytes;
  for (int back = 0; back < 3 && lead > 0 && is_continuation(static_cast<unsigned char>(s[lead])); ++back) --lead;
  const auto b = static_cast<unsigned char>(s[lead]);
  if (!is_continuation(b) && lead + sequence_length(b) > max_bytes) return s.substr(0, lead);
  return s.substr(0, max_bytes);
}

std::size_t count_code_points(std::string_view valid) {
  std::size_t n = 0;
  for (const char c : valid) n += !is_continuation(static_cast<unsigned char>(c));
  return n;
}

char32_t next_lenient(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  auto cont = [&](std::size_t k) { return i + k < s.size() && is_continuation(static_cast<unsigned char>(s[i + k])); };
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  std::size_t n = 0;
  if ((b0 & 0xE0) == 0xC0 && cont(1)) n = 2;
  else if ((b0 & 0xF0) == 0xE0 && cont(1) && cont(2)) n = 3;
  else if ((b0 & 0xF8) == 0xF0 && cont(1) && cont(2) && cont(3)) n = 4;
  if (n == 0) {
    ++i;
    return b0;
  }
  return next(s, i);  // the bit patterns are complete: the fast decoder reads exactly n bytes
}

std::size_t count_lenient(std::string_view s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++n) next_lenient(s, i);
  return n;
}

}  // namespace overhead::util::utf8
