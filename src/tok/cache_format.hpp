// The byte layout inside a compiled tokenizer cache file (see tokenizer_cache.hpp for the file
// around it): a writer that appends 8-byte-aligned scalars and arrays to a buffer, and a reader
// that walks the same layout over mapped bytes and checks every count and size against the bytes
// really there. The reader never trusts its input: any inconsistency throws CacheFormatError, and
// the caller rebuilds from tokenizer.json instead of reading past the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace overhead::tok {

class CacheFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A fast 64-bit checksum over the payload (XXH3 from xxHash, vectorised: about 0.1 instruction
// per byte, a fifth of the four-lane multiply-rotate sum it replaces), so checking a 30 MB cache
// costs about a millisecond. It detects truncation, flipped bits
// and stray writes; it is not a defence against someone who rewrites the file on purpose (the
// reader's bounds checks are what keep such a file from being read out of bounds).
std::uint64_t cache_checksum(const unsigned char* data, std::size_t size);

class CacheWriter {
 public:
  void u64(std::uint64_t v) { append(&v, sizeof v); }
  template <typename T>
  void array(std::span<const T> items) {
    static_assert(std::is_trivially_copyable_v<T>);
    u64(items.size());
    u64(sizeof(T));
    append(items.data(), items.size_bytes());
    pad();
  }
  void bytes(std::string_view s) { array(std::span<const char>(s.data(), s.size())); }
  const std::string& data() const { return buf_; }

 private:
  void append(const void* p, std::size_t n) { buf_.append(static_cast<const char*>(p), n); }
  void pad() { buf_.append((8 - buf_.size() % 8) % 8, '\0'); }
  std::string buf_;
};

class CacheReader {
 public:
  // `data` must be 8-byte aligned (a mapping is page aligned; every field keeps 8-byte alignment).
  CacheReader(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}

  std::uint64_t u64() {
    need(8, "a scalar");
    std::uint64_t v;
    std::memcpy(&v, data_ + pos_, 8);
    pos_ += 8;
    return v;
  }
  // A value that must be below `bound` (counts, ids, flags).
  std::uint64_t u64_below(std::uint64_t bound, const char* what) {
    const std::uint64_t v = u64();
    if (v >= bound) throw CacheFormatError(std::string(what) + " out of range");
    return v;
  }
  template <typename T>
  std::span<const T> array() {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::uint64_t count = u64();
    if (u64() != sizeof(T)) throw CacheFormatError("array element size differs");
    if (count > (size_ - pos_) / sizeof(T)) throw CacheFormatError("array runs past the end of the file");
    const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
    const auto* items = reinterpret_cast<const T*>(data_ + pos_);
    pos_ += bytes;
    const std::size_t padding = (8 - pos_ % 8) % 8;
    need(padding, "padding");
    pos_ += padding;
    return {items, static_cast<std::size_t>(count)};
  }
  std::string_view bytes() {
    const auto s = array<char>();
    return {s.data(), s.size()};
  }
  bool at_end() const { return pos_ == size_; }

 private:
  void need(std::size_t n, const char* what) const {
    if (n > size_ - pos_) throw CacheFormatError(std::string(what) + " runs past the end of the file");
  }
  const unsigned char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace overhead::tok
