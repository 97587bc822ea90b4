// Bytes as lowercase hex, two digits a byte: digests (SHA-256, MD5) and random ids as text.
#pragma once

#include <cstddef>
#include <string>

namespace overhead::util {

inline void append_hex(std::string& out, const unsigned char* bytes, std::size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.reserve(out.size() + 2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
}

[[nodiscard]] inline std::string to_hex(const unsigned char* bytes, std::size_t n) {
  std::string out;
  append_hex(out, bytes, n);
  return out;
}

}  // namespace overhead::util
