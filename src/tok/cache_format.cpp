#include "tok/cache_format.hpp"

// Header-only (inlined): no shared library to load at start.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace overhead::tok {

std::uint64_t cache_checksum(const unsigned char* data, std::size_t size) { return XXH3_64bits(data, size); }

}  // namespace overhead::tok
