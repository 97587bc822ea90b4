// A small per-thread, direct-mapped memo in front of the merge table. The merge table of a large
// vocabulary is several MB, so each lookup tends to miss the CPU caches; the pairs that text
// actually produces are few and repeat (Zipf), so a 256 KB table catches nearly all of them.
// Misses (pairs with no merge) are remembered too: they are as frequent as hits.
#pragma once

#include <cstdint>
#include <vector>

#include "tok/flat_maps.hpp"

namespace overhead::tok {

class PairCache {
 public:
  static constexpr std::uint32_t kNoMerge = ~0u;
  PairCache() : entries_(kEntries, Entry{~0ULL, 0, 0}) {}

  // The merge of (left, right): rank kNoMerge when there is none.
  PairMap::Merge find(const PairMap& merges, std::uint32_t left, std::uint32_t right) {
    const std::uint64_t key = (std::uint64_t{left} << 32) | right;
    Entry& e = entries_[((key * 0x9E3779B97F4A7C15ULL) >> 46) & (kEntries - 1)];
    if (e.key != key) {
      const PairMap::Merge* m = merges.find(left, right);
      e = Entry{key, m ? m->rank : kNoMerge, m ? m->id : 0};
    }
    return PairMap::Merge{e.rank, e.id};
  }

 private:
  static constexpr std::size_t kEntries = 1u << 14;
  struct Entry {
    std::uint64_t key;
    std::uint32_t rank;
    std::uint32_t id;
  };
  std::vector<Entry> entries_;
};

}  // namespace overhead::tok
