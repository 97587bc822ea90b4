// Unguessable ids: bytes from the kernel's CSPRNG (getrandom(2)), printed as hex. A per-thread
// userspace engine (mt19937) seeded from a few random bits is recoverable from the ids it prints;
// where an id is the only thing that keeps one client from reading another's result, every byte
// must come from the kernel.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace overhead::util {

// Fills `out` with `size` bytes from getrandom(2), retrying short reads and interrupts. Throws
// std::system_error when the kernel cannot supply them (never falls back to a weaker source).
void secure_random_bytes(void* out, std::size_t size);

// `prefix` followed by `bytes` random bytes as lowercase hex (2 x bytes characters).
[[nodiscard]] std::string random_hex_id(std::string_view prefix, std::size_t bytes = 16);

}  // namespace overhead::util
