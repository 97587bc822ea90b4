// A small per-thread, direct-mapped memo in front of the merge table. The merge table of a large
// vocabulary is several MB, so each lookup tends to miss the CPU caches; the pairs that text
// actually produces are few and repeat (Zipf), so a 256 KB table catches nearly all of them.
// Misses (pairs with no merge) are remembered too: they are as frequent as hits.
#pragma once

#include <cstdint>
#include <vector>

#include "tok/zeroed_table.hpp"
#include "tok/flat_maps.hpp"

namespace overhead::tok {

class PairCache {
 public:
  static constexpr std::uint32_t kNoMerge = ~0u;

  // The merge of (left, right): rank kNoMerge when there is none.
  PairMap::Merge find(const PairMap& merges, std::uint32_t left, std::uint32_t right) {
    const std::uint64_t key = (std::uint64_t{left} << 32) | right;
    Entry& e = entries_[((key * 0x9E3779B97F4A7C15ULL) >> 46) & (kEntries - 1)];
    if (e.inverted_key != ~key) {
      const PairMap::Merge* m = merges.find(left, right);
      e = Entry{~key, m ? m->rank : kNoMerge, m ? m->id : 0};
    }
    return PairMap::Merge{e.rank, e.id};
  }

 private:
  static constexpr std::size_t kEntries = 1u << 14;
  struct Entry {
    // The key's complement, so the zero bytes of an unused entry match no pair (the key of the
    // pair (0xFFFFFFFF, 0xFFFFFFFF) is never looked up: no id is that large).
    std::uint64_t inverted_key;
    std::uint32_t rank;
    std::uint32_t id;
  };
  ZeroedTable<Entry> entries_{kEntries};
};

}  // namespace overhead::tok
