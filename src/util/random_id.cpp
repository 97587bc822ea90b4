#include "util/random_id.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <system_error>
#include <vector>

#include "util/hex.hpp"

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
  unsigned char small[32];
  std::vector<unsigned char> large;
  unsigned char* raw = small;
  if (bytes > sizeof small) {
    large.resize(bytes);
    raw = large.data();
  }
  secure_random_bytes(raw, bytes);
  std::string id(prefix);
  append_hex(id, raw, bytes);
  return id;
}

}  // namespace overhead::util
