// Two open-addressing hash tables tuned for the BPE hot path, where std::unordered_map's node
// allocation and pointer chasing would dominate: token bytes -> id, and (left id, right id) ->
// (merge rank, merged id). Both are built once at load and only read afterwards.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::tok {

inline std::uint64_t hash_bytes(std::string_view s) {
  // Eight bytes per step through a multiply-xorshift mix: keys range from 1-byte tokens to
  // several-hundred-byte CJK pieces (cache keys), so per-byte hashing would show in profiles.
  constexpr std::uint64_t kMul = 0x9E3779B97F4A7C15ULL;
  std::uint64_t h = 0x243F6A8885A308D3ULL ^ (s.size() * kMul);
  const char* p = s.data();
  std::size_t n = s.size();
  while (n >= 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
    p += 8;
    n -= 8;
  }
  if (n) {
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * kMul;
    h ^= h >> 32;
  }
  h *= 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 31);
}

class StringIdMap {
 public:
  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.assign(cap, Slot{});
    mask_ = cap - 1;
  }
  // Inserts (or overwrites) key -> id.
  void insert(std::string_view key, std::uint32_t id) {
    if (slots_.empty() || (size_ + 1) * 2 > slots_.size()) grow();
    place(key, id);
  }
  std::optional<std::uint32_t> find(std::string_view key) const {
    if (slots_.empty()) return std::nullopt;
    const std::uint64_t h = hash_bytes(key);
    const auto tag = static_cast<std::uint32_t>(h >> 32) | 1u;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.tag == 0) return std::nullopt;
      if (s.tag == tag && s.length == key.size() &&
          std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0)
        return s.id;
    }
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint32_t tag = 0;  // 0 = empty; otherwise high hash bits | 1
    std::uint32_t id = 0;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
  };
  void place(std::string_view key, std::uint32_t id) {
    const std::uint64_t h = hash_bytes(key);
    const auto tag = static_cast<std::uint32_t>(h >> 32) | 1u;
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.tag == 0) {
        s = Slot{tag, id, static_cast<std::uint32_t>(arena_.size()), static_cast<std::uint32_t>(key.size())};
        arena_.append(key);
        ++size_;
        return;
      }
      if (s.tag == tag && s.length == key.size() &&
          std::memcmp(arena_.data() + s.offset, key.data(), key.size()) == 0) {
        s.id = id;
        return;
      }
    }
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    std::string old_arena = std::move(arena_);
    reserve(std::max<std::size_t>(16, size_ * 2 + 2));
    size_ = 0;
    arena_.clear();
    for (const Slot& s : old)
      if (s.tag != 0) place(std::string_view(old_arena.data() + s.offset, s.length), s.id);
  }

  std::vector<Slot> slots_;
  std::string arena_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// (left, right) -> (rank, merged id). Keys are never 0 because ids pack as left<<32|right with the
// empty marker kEmpty = all ones (no tokenizer has 2^32-1 tokens).
class PairMap {
 public:
  struct Merge {
    std::uint32_t rank;
    std::uint32_t id;
  };
  void reserve(std::size_t n) {
    // Load factor about 0.6: lookups miss as often as they hit (most adjacent pairs have no
    // merge), and a smaller table keeps more of it in cache, which matters more than probe length.
    std::size_t cap = 16;
    while (cap * 3 < n * 5) cap <<= 1;
    slots_.assign(cap, Slot{kEmpty, Merge{}});
    mask_ = cap - 1;
  }
  // Keeps the first insertion of a pair (HF keeps the lowest rank when merges repeat).
  void insert_if_absent(std::uint32_t left, std::uint32_t right, Merge m) {
    const std::uint64_t key = pack(left, right);
    for (std::size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) {
        slots_[i] = Slot{key, m};
        return;
      }
      if (slots_[i].key == key) return;
    }
  }
  const Merge* find(std::uint32_t left, std::uint32_t right) const {
    const std::uint64_t key = pack(left, right);
    for (std::size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.key == key) return &s.merge;
      if (s.key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~0ULL;
  // Key and value side by side: one cache line answers a lookup.
  struct Slot {
    std::uint64_t key;
    Merge merge;
  };
  static std::uint64_t pack(std::uint32_t l, std::uint32_t r) { return (std::uint64_t{l} << 32) | r; }
  static std::uint64_t mix(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return k;
  }
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace overhead::tok
