// The digest the golden files use to pin a long id sequence (or a rendered text) in 16 hex digits:
// FNV-1a 64 over the bytes of the ids written as decimal and joined by ','. Chosen because the
// reference scripts (Node, Python) compute it in a few lines with no dependency.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace overhead::util {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t seed = 0xcbf29ce484222325ULL);
// fnv1a64 of "id0,id1,..." as 16 lowercase hex digits.
std::string ids_digest(std::span<const std::uint32_t> ids);
// fnv1a64 of the bytes as 16 lowercase hex digits.
std::string text_digest(std::string_view text);

}  // namespace overhead::util
