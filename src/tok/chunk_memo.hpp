// Per-thread memo of short chunks (up to 15 bytes: up to five CJK characters, a short word) to
// their ids. After cutting at merge-proof boundaries most chunks are this short and repeat
// constantly, so a small table keyed by the chunk's bytes answers them in a few instructions
// instead of a merge loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "tok/zeroed_table.hpp"

namespace overhead::tok {

class ChunkMemo {
 public:
  static constexpr std::size_t kMaxBytes = 15;
  static constexpr std::size_t kMaxIds = 4;
  static_assert(kMaxBytes <= 15, "pack() covers at most 15 bytes");
  static_assert(kMaxIds == 4, "lookup_to counts at most four ids");

  // `entries` is a power of two, at most 2^24 (the slot comes from 24 bits of the hash).
  explicit ChunkMemo(std::size_t entries = kDefaultEntries) : mask_(entries - 1), entries_(entries) {}

  // Appends the memoised ids of `chunk` (at most kMaxBytes) and returns true, or returns false.
  [[gnu::always_inline]] bool lookup(std::string_view chunk, std::vector<std::uint32_t>& out) const {
    const Entry* e = find(chunk);
    if (e == nullptr) return false;
    // A few ids: push_back inlines, where a range insert is an out-of-line call per chunk.
    for (std::size_t k = 0; k < kMaxIds && e->ids[k] != kNoId; ++k) out.push_back(e->ids[k]);
    return true;
  }
  // The same, writing all kMaxIds slots of the entry at dst (which must have room for them) and
  // the count of ids among them in `count`: one copy instead of a push_back per id.
  [[gnu::always_inline]] bool lookup_to(std::string_view chunk, std::uint32_t* dst, std::size_t& count) const {
    const Entry* e = find(chunk);
    if (e == nullptr) return false;
    std::memcpy(dst, e->ids, sizeof e->ids);
    // A stored entry has 1..kMaxIds ids, kNoId after the last.
    count = e->ids[1] == kNoId ? 1 : e->ids[2] == kNoId ? 2 : e->ids[3] == kNoId ? 3 : 4;
    return true;
  }
  void store(std::string_view chunk, const std::uint32_t* ids, std::size_t count) {
    if (count == 0 || count > kMaxIds) return;
    for (std::size_t k = 0; k < count; ++k)
      if (ids[k] == kNoId) return;  // not an id any vocabulary here has; it marks an unused place
    const Key key = pack(chunk);
    const std::size_t i = slot(key);
    // Two ways in one cache line: the newest entry takes the first, the one it displaces the
    // second (direct-mapped, two chunks that shared a slot evicted each other on every use).
    entries_[i ^ 1] = entries_[i];
    Entry& e = entries_[i];
    e.key = key;
    for (std::size_t k = 0; k < kMaxIds; ++k) e.ids[k] = k < count ? ids[k] : kNoId;
  }

 private:
  // 64 K entries of 32 bytes (2 MB of zero pages, touched as used), in pairs that each fill one
  // 64-byte cache line: a lookup reads one line. The MT-Bench texts have about 33 K distinct
  // short chunks for gemma-2; 8 K direct-mapped entries thrashed on them (+13-26% MB/s
  // single-threaded on the seed tokenizers with 64 K).
  static constexpr std::size_t kDefaultEntries = 1u << 16;
  std::size_t mask_;
  static constexpr std::uint32_t kNoId = ~0u;
  struct Key {
    std::uint64_t low = 0;
    std::uint64_t high = 0;
  };
  // All zero when unused: the key's top byte holds the chunk's length, never 0, so no chunk
  // matches an unused entry.
  struct alignas(32) Entry {
    Key key;
    std::uint32_t ids[kMaxIds];  // kNoId after the last
  };
  static_assert(sizeof(Entry) == 32, "two entries a cache line");
  // The entry holding `chunk`: the newer way of its slot's pair, else the older, else nullptr.
  [[gnu::always_inline]] const Entry* find(std::string_view chunk) const {
    const Key key = pack(chunk);
    const std::size_t i = slot(key);
    const Entry* e = &entries_[i];
    if (matches(*e, key)) return e;
    e = &entries_[i ^ 1];
    return matches(*e, key) ? e : nullptr;
  }
  static bool matches(const Entry& e, const Key& key) { return e.key.low == key.low && e.key.high == key.high; }
  static std::uint64_t load(const char* p, std::size_t n) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);  // n is a constant at every call site: a plain load
    return w;
  }
  // The chunk's bytes as two words read from its two ends (they overlap when it is shorter than
  // 16 bytes, and together cover every byte), with the length in the top byte: for a given length
  // the two words determine the bytes, so distinct chunks get distinct keys. Fixed-size loads only,
  // never reading outside the chunk.
  static Key pack(std::string_view chunk) {
    const char* p = chunk.data();
    const std::size_t n = chunk.size();
    Key k;
    if (n >= 8) {
      k.low = load(p, 8);
      k.high = load(p + n - 8, 8) >> 8;  // the last 7 of those bytes; the first is in `low`
      if (n == 8) k.high = 0;
    } else if (n >= 4) {
      k.low = load(p, 4) | (load(p + n - 4, 4) << 32);
    } else if (n > 0) {
      k.low = static_cast<unsigned char>(p[0]) | (std::uint64_t{static_cast<unsigned char>(p[n / 2])} << 8) |
              (std::uint64_t{static_cast<unsigned char>(p[n - 1])} << 16);
    }
    k.high |= std::uint64_t{n} << 56;
    return k;
  }
  std::size_t slot(const Key& key) const {
    const std::uint64_t h = (key.low ^ (key.high * 0xC2B2AE3D27D4EB4FULL)) * 0x9E3779B97F4A7C15ULL;
    return (h >> 40) & mask_;
  }
  ZeroedTable<Entry> entries_;
};

}  // namespace overhead::tok
