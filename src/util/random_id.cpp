#include "util/random_id.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <vector>

namespace overhead::util {

void secure_random_bytes(void* out, std::size_t size) {
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t n = ::getrandom(p, size, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

std::string random_hex_id(std::string_view prefix, std::size_t bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  unsigned char small[32];
  std::vector<unsigned char> large;
  unsigned char* raw = small;
  if (bytes > sizeof small) {
    large.resize(bytes);
    raw = large.data();
  }
  secure_random_bytes(raw, bytes);
  std::string id(prefix);
  id.reserve(prefix.size() + 2 * bytes);
  for (std::size_t i = 0; i < bytes; ++i) {
    id += kHex[raw[i] >> 4];
    id += kHex[raw[i] & 15];
  }
  return id;
}

}  // namespace overhead::util
