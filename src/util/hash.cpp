#include "util/hash.hpp"

#include <charconv>
#include <cstdio>

namespace overhead::util {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

namespace {
std::string hex16(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}
}  // namespace

std::string ids_digest(std::span<const std::uint32_t> ids) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  char buf[16];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) h = fnv1a64(",", h);
    const auto r = std::to_chars(buf, buf + sizeof buf, ids[i]);
    h = fnv1a64(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)), h);
  }
  return hex16(h);
}

std::string text_digest(std::string_view text) { return hex16(fnv1a64(text)); }

}  // namespace overhead::util
