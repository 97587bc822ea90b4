// A per-thread, direct-mapped memo of MergeBoundaries answers keyed by the two code points of a
// boundary. The boundary set of a large vocabulary is megabytes, and one boundary costs one to four
// probes into it, each a likely cache miss; the character pairs real text produces repeat, so one
// probe into this table answers nearly all of them. The answer is a pure function of the two code
// points (their UTF-8 bytes follow from them), so memoising it is exact. Its size is the model's
// choice (bpe_model.hpp): a model that cuts every character of whole messages asks about far more
// distinct pairs than one that cuts only the long pieces of a pre-tokenizer.
#pragma once

#include <cstdint>

#include "tok/zeroed_table.hpp"

namespace overhead::tok {

class BoundaryMemo {
 public:
  // 2^index_bits entries of four bytes (12 to 30 bits).
  explicit BoundaryMemo(unsigned index_bits) : index_bits_(index_bits), entries_(std::size_t{1} << index_bits) {}

  // The table as a loop holds it: a local copy whose fields stay in registers (the memo's own
  // fields would be reloaded after every store of ids the loop makes).
  class Lookup {
   public:
    // Whether x|y may be cut: the memoised answer, or `compute()`'s, which is then remembered.
    template <typename Compute>
    bool cuttable(char32_t x, char32_t y, Compute compute) const {
      // The pair as 42 bits, scrambled by a multiplication modulo 2^42 by an odd constant (a
      // bijection, so distinct pairs stay distinct): the top bits pick the entry, the entry keeps
      // the rest as its tag, with a used bit (clear in an unused, zero entry) and the answer.
      // Four bytes an entry instead of eight: twice the pairs in the same cache footprint.
      const std::uint64_t pair = (std::uint64_t{x} << 21) | y;
      const std::uint64_t h = (pair * 0x9E3779B97F4A7C15ULL) & ((std::uint64_t{1} << 42) - 1);
      std::uint32_t& e = entries_[h >> tag_bits_];
      const std::uint32_t answer = std::uint32_t{1} << tag_bits_;
      const auto tag = static_cast<std::uint32_t>(h & (answer - 1)) | (answer << 1);
      if ((e & ~answer) == tag) return (e & answer) != 0;
      const bool cut = compute();
      e = tag | (cut ? answer : 0);
      return cut;
    }

   private:
    friend class BoundaryMemo;
    Lookup(std::uint32_t* entries, unsigned tag_bits) : entries_(entries), tag_bits_(tag_bits) {}
    std::uint32_t* entries_;
    unsigned tag_bits_;
  };
  Lookup lookup() { return Lookup(&entries_[0], 42 - index_bits_); }

 private:
  unsigned index_bits_;
  ZeroedTable<std::uint32_t> entries_;
};

}  // namespace overhead::tok
