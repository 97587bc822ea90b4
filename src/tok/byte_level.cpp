#include "tok/byte_level.hpp"

#include "util/utf8.hpp"

namespace overhead::tok::byte_level {

namespace {

struct Tables {
  std::array<char32_t, 256> to_char{};
  std::array<std::int16_t, 0x144> to_byte{};  // mapped chars are all below U+0144
  Tables() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[b]] = static_cast<std::int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

char32_t byte_to_char(std::uint8_t b) { return tables().to_char[b]; }

std::optional<std::uint8_t> char_to_byte(char32_t c) {
  if (c >= tables().to_byte.size()) return std::nullopt;
  const auto b = tables().to_byte[c];
  if (b < 0) return std::nullopt;
  return static_cast<std::uint8_t>(b);
}

std::optional<std::string> to_bytes(std::string_view mapped) {
  std::string out;
  out.reserve(mapped.size());
  std::size_t i = 0;
  while (i < mapped.size()) {
    const auto b = char_to_byte(util::utf8::next(mapped, i));
    if (!b) return std::nullopt;
    out.push_back(static_cast<char>(*b));
  }
  return out;
}

}  // namespace overhead::tok::byte_level
