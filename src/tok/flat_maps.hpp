// Two open-addressing hash tables tuned for the BPE hot path, where std::unordered_map's node
// allocation and pointer chasing would dominate: token bytes -> id, and (left id, right id) ->
// (merge rank, merged id). Both are built once at load and only read afterwards.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tok/cache_format.hpp"
#include "tok/flat_array.hpp"

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
  StringIdMap() = default;
  StringIdMap(StringIdMap&&) noexcept = default;
  StringIdMap& operator=(StringIdMap&&) noexcept = default;

  void reserve(std::size_t n) {
    std::size_t cap = 16;
    while (cap < n * 2) cap <<= 1;
    slots_.vec().assign(cap, Slot{});
    slots_.seal();
    mask_ = cap - 1;
  }
  // Inserts (or overwrites) key -> id. Only on a map built here, not on one read from a cache.
  void insert(std::string_view key, std::uint32_t id) {
    if (slots_.empty() || (size_ + 1) * 2 > slots_.size()) grow();
    place(key, id);
  }
  std::optional<std::uint32_t> find(std::string_view key) const { return find(key, hash_bytes(key)); }
  // The same with `h` = hash_bytes(key) already in hand (the piece cache hashes every piece).
  std::optional<std::uint32_t> find(std::string_view key, std::uint64_t h) const {
    if (slots_.empty()) return std::nullopt;
    const auto tag = static_cast<std::uint32_t>(h >> 32) | 1u;
    const Slot* slots = slots_.data();
    const char* arena = arena_.data();
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots[i];
      if (s.tag == 0) return std::nullopt;
      // The offset check keeps a slot of a cache file edited on purpose inside the arena; it runs
      // only on a tag match, so it costs nothing on the probes that miss.
      if (s.tag == tag && s.length == key.size() && s.offset <= arena_.size() &&
          key.size() <= arena_.size() - s.offset && std::memcmp(arena + s.offset, key.data(), key.size()) == 0)
        return s.id;
    }
  }
  // The number of keys (for a map read from a cache: as its file says; nothing relies on it).
  std::size_t size() const { return size_; }
  // Identifies this table's hashing and layout, so a cache written by a build that hashed
  // differently is never read.
  static std::uint64_t layout_fingerprint() { return hash_bytes("layout of StringIdMap") ^ sizeof(Slot); }

  void write(CacheWriter& w) const {
    w.u64(size_);
    w.array(slots_.span());
    w.array(arena_.span());
  }
  // Views the arrays in `r`, after checking what find() relies on to end: a power-of-two table
  // with an empty slot. The table is not walked (megabytes, which a cold start would read in
  // full): a slot's key is checked against the arena when find() compares it.
  void read(CacheReader& r) {
    size_ = r.u64();
    const auto slots = r.array<Slot>();
    const auto arena = r.array<char>();
    if (!slots.empty() && (slots.size() & (slots.size() - 1)) != 0)
      throw CacheFormatError("string table size is not a power of two");
    // A load factor of at most 1/2 puts the first empty slot within the first few.
    if (!slots.empty() && std::none_of(slots.begin(), slots.end(), [](const Slot& s) { return s.tag == 0; }))
      throw CacheFormatError("string table has no empty slot");
    slots_.view(slots);
    arena_.view(arena);
    mask_ = slots.empty() ? 0 : slots.size() - 1;
  }

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
    std::vector<Slot>& slots = slots_.vec();
    std::vector<char>& arena = arena_.vec();
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots[i];
      if (s.tag == 0) {
        s = Slot{tag, id, static_cast<std::uint32_t>(arena.size()), static_cast<std::uint32_t>(key.size())};
        arena.insert(arena.end(), key.begin(), key.end());
        arena_.seal();
        ++size_;
        return;
      }
      if (s.tag == tag && s.length == key.size() && std::memcmp(arena.data() + s.offset, key.data(), key.size()) == 0) {
        s.id = id;
        return;
      }
    }
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_.vec());
    std::vector<char> old_arena = std::move(arena_.vec());
    reserve(std::max<std::size_t>(16, size_ * 2 + 2));
    size_ = 0;
    arena_.vec().clear();
    arena_.seal();
    for (const Slot& s : old)
      if (s.tag != 0) place(std::string_view(old_arena.data() + s.offset, s.length), s.id);
  }

  FlatArray<Slot> slots_;
  FlatArray<char> arena_;
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
    slots_.vec().assign(cap, Slot{kEmpty, Merge{}});
    slots_.seal();
    mask_ = cap - 1;
  }
  // Keeps the first insertion of a pair (HF keeps the lowest rank when merges repeat).
  void insert_if_absent(std::uint32_t left, std::uint32_t right, Merge m) {
    const std::uint64_t key = pack(left, right);
    std::vector<Slot>& slots = slots_.vec();
    for (std::size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      if (slots[i].key == kEmpty) {
        slots[i] = Slot{key, m};
        return;
      }
      if (slots[i].key == key) return;
    }
  }
  const Merge* find(std::uint32_t left, std::uint32_t right) const {
    const std::uint64_t key = pack(left, right);
    const Slot* slots = slots_.data();
    for (std::size_t i = mix(key) & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots[i];
      if (s.key == key) return &s.merge;
      if (s.key == kEmpty) return nullptr;
    }
  }

  void write(CacheWriter& w) const { w.array(slots_.span()); }
  // Views the table in `r`: a power-of-two size with at least one empty slot, so probing ends.
  void read(CacheReader& r) {
    const auto slots = r.array<Slot>();
    if (slots.size() < 16 || (slots.size() & (slots.size() - 1)) != 0)
      throw CacheFormatError("merge table size is not a power of two");
    // Stops at the first empty slot (a load factor under 1/2 puts one near the start).
    const bool has_empty = std::any_of(slots.begin(), slots.end(), [](const Slot& s) { return s.key == kEmpty; });
    if (!has_empty) throw CacheFormatError("merge table has no empty slot");
    slots_.view(slots);
    mask_ = slots.size() - 1;
  }
  // Identifies this table's hashing and layout (see StringIdMap::layout_fingerprint).
  static std::uint64_t layout_fingerprint() { return mix(pack(12345, 678)) ^ sizeof(Slot); }

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
  FlatArray<Slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace overhead::tok
