// Per-thread memo of short chunks (up to 7 bytes: one to two CJK characters, a short word) to
// their ids. After cutting at merge-proof boundaries most chunks are this short and repeat
// constantly, so a direct-mapped table keyed by the packed bytes answers them in a few
// instructions instead of a merge loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace overhead::tok {

class ChunkMemo {
 public:
  static constexpr std::size_t kMaxBytes = 7;
  static constexpr std::size_t kMaxIds = 4;

  ChunkMemo() : entries_(kEntries) {}

  // Appends the memoised ids of `chunk` (at most kMaxBytes) and returns true, or returns false.
  bool lookup(std::string_view chunk, std::vector<std::uint32_t>& out) const {
    const std::uint64_t key = pack(chunk);
    const Entry& e = entries_[slot(key)];
    if (e.key != key || e.count == 0) return false;
    out.insert(out.end(), e.ids, e.ids + e.count);
    return true;
  }
  void store(std::string_view chunk, const std::uint32_t* ids, std::size_t count) {
    if (count == 0 || count > kMaxIds) return;
    const std::uint64_t key = pack(chunk);
    Entry& e = entries_[slot(key)];
    e.key = key;
    e.count = static_cast<std::uint32_t>(count);
    std::memcpy(e.ids, ids, count * sizeof(std::uint32_t));
  }

 private:
  static constexpr std::size_t kEntries = 1u << 12;
  struct Entry {
    std::uint64_t key = 0;
    std::uint32_t count = 0;
    std::uint32_t ids[kMaxIds] = {};
  };
  // Up to 7 bytes in the low part and the length in the top byte: distinct chunks, distinct keys.
  static std::uint64_t pack(std::string_view chunk) {
    std::uint64_t key = 0;
    std::memcpy(&key, chunk.data(), chunk.size());
    return key | (std::uint64_t{chunk.size()} << 56);
  }
  static std::size_t slot(std::uint64_t key) { return ((key * 0x9E3779B97F4A7C15ULL) >> 40) & (kEntries - 1); }
  std::vector<Entry> entries_;
};

}  // namespace overhead::tok
