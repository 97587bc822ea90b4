#include "tok/merge_boundaries.hpp"

#include <algorithm>

namespace overhead::tok {

namespace {

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

std::size_t char_length(unsigned char b) {
  if (b < 0x80) return 1;
  if (b < 0xE0) return 2;
  if (b < 0xF0) return 3;
  return 4;
}

std::uint32_t code_point(std::string_view s, std::size_t at, std::size_t n) {
  auto b = [&](std::size_t k) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + k])); };
  switch (n) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

std::uint64_t mix(std::uint64_t k) {
  k ^= k >> 31;
  k *= 0x9E3779B97F4A7C15ULL;
  return k ^ (k >> 29);
}

}  // namespace

void MergeBoundaries::insert(std::uint64_t k) {
  if ((size_ + 1) * 2 > slots_.size()) {
    std::vector<std::uint64_t> old = std::move(slots_.vec());
    slots_.vec().assign(old.empty() ? 1024 : old.size() * 2, 0);
    slots_.seal();
    size_ = 0;
    for (const std::uint64_t o : old)
      if (o) insert(o);
  }
  std::vector<std::uint64_t>& slots = slots_.vec();
  const std::size_t mask = slots.size() - 1;
  for (std::size_t i = mix(k) & mask;; i = (i + 1) & mask) {
    if (slots[i] == k) return;
    if (slots[i] == 0) {
      slots[i] = k;
      ++size_;
      return;
    }
  }
}

void MergeBoundaries::write(CacheWriter& w) const {
  w.u64(size_);
  w.array(slots_.span());
}

void MergeBoundaries::read(CacheReader& r) {
  size_ = r.u64();
  const auto slots = r.array<std::uint64_t>();
  if (!slots.empty() && (slots.size() & (slots.size() - 1)) != 0)
    throw CacheFormatError("boundary table size is not a power of two");
  // What contains() relies on to end; found within the first few slots (load factor at most
  // 1/2), so the table is not read in full at start.
  if (!slots.empty() && std::none_of(slots.begin(), slots.end(), [](std::uint64_t s) { return s == 0; }))
    throw CacheFormatError("boundary table has no empty slot");
  slots_.view(slots);
}

std::uint64_t MergeBoundaries::layout_fingerprint() { return mix(key(kBytes, 0xE3, 0x81)); }

bool MergeBoundaries::contains(std::uint64_t k) const {
  if (slots_.empty()) return false;
  const std::uint64_t* slots = slots_.data();
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = mix(k) & mask;; i = (i + 1) & mask) {
    if (slots[i] == k) return true;
    if (slots[i] == 0) return false;
  }
}

void MergeBoundaries::add_token(std::string_view t) {
  // A token is [tail of a char][complete chars][head of a char]; anything else (not UTF-8 at all)
  // is recorded byte pair by byte pair, which only makes the check more conservative.
  std::size_t i = 0;
  while (i < t.size() && is_continuation(static_cast<unsigned char>(t[i]))) ++i;
  const bool starts_inside = i > 0;
  bool previous_complete = false;  // the unit before position i was a complete char
  std::uint32_t previous_cp = 0;
  while (i < t.size()) {
    const auto lead = static_cast<unsigned char>(t[i]);
    const std::size_t n = char_length(lead);
    bool complete = !is_continuation(lead) && i + n <= t.size();
    for (std::size_t k = 1; complete && k < n; ++k) complete = is_continuation(static_cast<unsigned char>(t[i + k]));
    if (!complete) {
      // The head of a char (or stray bytes) to the end: boundary before it, then byte pairs.
      if (i > 0) {
        const auto before = static_cast<unsigned char>(t[i - 1]);
        insert(previous_complete ? key(kCharByte, previous_cp, lead) : key(kBytes, before, lead));
      }
      for (std::size_t k = i + 1; k < t.size(); ++k)
        insert(key(kBytes, static_cast<unsigned char>(t[k - 1]), static_cast<unsigned char>(t[k])));
      return;
    }
    const std::uint32_t cp = code_point(t, i, n);
    if (i > 0) {
      if (previous_complete) {
        insert(key(kChars, previous_cp, cp));
      } else if (starts_inside) {
        insert(key(kByteChar, static_cast<unsigned char>(t[i - 1]), cp));
      }
    }
    previous_complete = true;
    previous_cp = cp;
    i += n;
  }
}

bool MergeBoundaries::cuttable(std::string_view left, std::string_view right) const {
  return cuttable(code_point(left, 0, left.size()), left.size(), static_cast<unsigned char>(left.back()),
                  code_point(right, 0, right.size()), right.size(), static_cast<unsigned char>(right.front()));
}

bool MergeBoundaries::cuttable(std::uint32_t x, std::size_t x_length, unsigned char x_last, std::uint32_t y,
                               std::size_t y_length, unsigned char y_first) const {
  if (contains(key(kChars, x, y))) return false;
  if (y_length > 1 && contains(key(kCharByte, x, y_first))) return false;
  if (x_length > 1 && contains(key(kByteChar, x_last, y))) return false;
  if (x_length > 1 && y_length > 1 && contains(key(kBytes, x_last, y_first))) return false;
  return true;
}

}  // namespace overhead::tok
