// A per-thread, direct-mapped memo of MergeBoundaries answers keyed by the two code points of a
// boundary. The boundary set of a large vocabulary is megabytes, and one boundary of byte-level
// text costs up to four probes into it; the character pairs real text produces are few and repeat,
// so one probe into this 128 KB table answers nearly all of them. The answer is a pure function
// of the two code points (their UTF-8 bytes follow from them), so memoising it is exact.
#pragma once

#include <cstdint>
#include <vector>

#include "tok/zeroed_table.hpp"

namespace overhead::tok {

class BoundaryMemo {
 public:
  // Whether x|y may be cut: the memoised answer, or `compute()`'s, which is then remembered.
  template <typename Compute>
  bool cuttable(char32_t x, char32_t y, Compute compute) {
    // 21 bits per code point, a set bit 63 marks a used entry, bit 62 holds the answer.
    const std::uint64_t key = (std::uint64_t{1} << 63) | (std::uint64_t{x} << 21) | y;
    std::uint64_t& e = entries_[((key * 0x9E3779B97F4A7C15ULL) >> 40) & (kEntries - 1)];
    if ((e & ~kAnswer) == key) return (e & kAnswer) != 0;
    const bool cut = compute();
    e = key | (cut ? kAnswer : 0);
    return cut;
  }

 private:
  static constexpr std::size_t kEntries = 1u << 14;
  static constexpr std::uint64_t kAnswer = std::uint64_t{1} << 62;
  ZeroedTable<std::uint64_t> entries_{kEntries};  // bit 63 clear: unused
};

}  // namespace overhead::tok
