// GPT-2's reversible byte <-> printable-character mapping, used by the ByteLevel pre-tokenizer,
// post-processor and decoder: bytes that are printable Latin-1 map to themselves, the others to
// U+0100 and up, so every byte string becomes a printable string.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace overhead::tok::byte_level {

// The character byte b maps to.
char32_t byte_to_char(std::uint8_t b);
// The byte a character maps back from, or nullopt if c is not one of the 256 mapped characters.
std::optional<std::uint8_t> char_to_byte(char32_t c);
// Decodes a token in mapped form to raw bytes; nullopt if any character is unmapped.
std::optional<std::string> to_bytes(std::string_view mapped);

}  // namespace overhead::tok::byte_level
