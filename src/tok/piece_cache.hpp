// A per-thread memo of piece -> ids for one BPE model. Text repeats words and phrases (and chat
// prompts repeat whole questions), so most pieces after the first are a hash lookup instead of a
// merge loop. Thread-local, so the shared model stays immutable and lock-free; bounded, and
// simply emptied when full (no eviction bookkeeping on the hot path). The BPE model keeps two:
// one for whole pieces, and a smaller one for the chunks longer than the chunk memo holds
// (chunk_memo.hpp) that a long piece is cut into.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tok/flat_maps.hpp"
#include "tok/zeroed_table.hpp"

namespace overhead::tok {

class PieceCache {
 public:
  static constexpr std::size_t kMaxBytes = 4u << 20;   // key bytes + 4 x ids held
  static constexpr std::size_t kSlots = 1u << 17;       // power of two, load kept under 1/2

  // `slots` must be a power of two; `max_bytes` bounds the key bytes + 4 x ids held.
  explicit PieceCache(std::size_t slots = kSlots, std::size_t max_bytes = kMaxBytes)
      : max_bytes_(max_bytes), mask_(slots - 1), slots_(slots) {}

  // Appends the cached ids of `piece` to `out` and returns true, or returns false.
  bool lookup(std::string_view piece, std::uint64_t hash, std::vector<std::uint32_t>& out) const {
    const auto tag = static_cast<std::uint32_t>(hash >> 32) | 1u;
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.tag == 0) return false;
      if (s.tag == tag && s.key_length == piece.size() &&
          std::memcmp(keys_.data() + s.key_offset, piece.data(), piece.size()) == 0) {
        out.insert(out.end(), ids_.begin() + s.ids_offset, ids_.begin() + s.ids_offset + s.ids_length);
        return true;
      }
    }
  }

  void store(std::string_view piece, std::uint64_t hash, const std::uint32_t* ids, std::size_t count) {
    if (used_ * 2 >= mask_ + 1 || keys_.size() + piece.size() + 4 * (ids_.size() + count) > max_bytes_) clear();
    const auto tag = static_cast<std::uint32_t>(hash >> 32) | 1u;
    std::size_t i = hash & mask_;
    while (slots_[i].tag != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{tag, static_cast<std::uint32_t>(keys_.size()), static_cast<std::uint32_t>(piece.size()),
                     static_cast<std::uint32_t>(ids_.size()), static_cast<std::uint32_t>(count)};
    keys_.append(piece);
    ids_.insert(ids_.end(), ids, ids + count);
    ++used_;
  }

 private:
  struct Slot {
    std::uint32_t tag = 0;
    std::uint32_t key_offset = 0;
    std::uint32_t key_length = 0;
    std::uint32_t ids_offset = 0;
    std::uint32_t ids_length = 0;
  };
  void clear() {
    slots_.clear();
    keys_.clear();
    ids_.clear();
    used_ = 0;
  }
  std::size_t max_bytes_;
  std::size_t mask_;
  ZeroedTable<Slot> slots_;  // a zero tag is an empty slot
  std::string keys_;
  std::vector<std::uint32_t> ids_;
  std::size_t used_ = 0;
};

}  // namespace overhead::tok
