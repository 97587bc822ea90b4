// The Lua scripts behind the Redis Streams queue. Each runs atomically on the server, so a
// receive (reclaim expired entries, move exhausted ones to the dead-letter stream, read new ones,
// stamp their delivery time) or a delete (check the receipt, XACK, XDEL) is one round trip and
// can never interleave with another consumer's.
//
// Time: an entry's visibility deadline is its pending-entry delivery time plus the timeout. The
// scripts stamp delivery times themselves (XCLAIM ... TIME) in "queue time", which is the
// server's clock minus kRedisTimeHeadroomMs (or the caller's clock in tests). The headroom lets
// an extension put a deadline beyond the timeout without a delivery time in the server's future
// (which Redis would clamp to now).
#pragma once

#include <cstdint>

namespace overhead::backends {

inline constexpr std::int64_t kRedisTimeHeadroomMs = 24LL * 3600 * 1000;

// KEYS: stream, dead-letter stream. ARGV: group, consumer, max, visibility_ms, max_receives,
// now ("" = server time - headroom). Returns {moved_to_dlq, last_id_or_"", id, count, body, ...}.
extern const char* const kRedisReceiveScript;
// KEYS: stream. ARGV: group, lenient (0/1), then id, count pairs. Returns the 1-based pair
// indices that were not deleted (stale or unknown receipts). Lenient (used on a retry after a
// lost reply) also counts an entry that is gone entirely as deleted.
extern const char* const kRedisDeleteScript;
// KEYS: stream. ARGV: group, id, count, visibility_ms, timeout_ms, now. Returns 1 when the
// receipt is current and the new deadline is set, else 0.
extern const char* const kRedisVisibilityScript;

}  // namespace overhead::backends
