// Counts calls of the global operator new (replaced in alloc_counter.cpp, its own translation unit
// so that no caller inlines the malloc/free pair), for benchmarks that show what a path allocates.
// libc malloc calls made by C libraries (libcurl) are not counted.
#pragma once

#include <cstdint>

namespace overhead::bench {
[[nodiscard]] std::uint64_t operator_new_calls();
}  // namespace overhead::bench
