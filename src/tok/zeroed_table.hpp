// A fixed-size table of trivially copyable entries whose all-zero bytes mean "empty", backed by
// anonymous memory that the kernel supplies as zero pages on first touch. The per-thread memo
// tables of the BPE model (piece_cache.hpp, pair_cache.hpp, chunk_memo.hpp, boundary_memo.hpp)
// are about 6 MB per model; filled with a memset (a std::vector) they cost every short process,
// such as one `overhead tokenize` of one line, some 850 page faults for pages it never reads.
// Here a process pays for the pages it uses.
#pragma once

#include <cstddef>
#include <type_traits>

namespace overhead::tok {

namespace detail {
// Anonymous zero-filled memory of `bytes` (throws std::bad_alloc), its release, and its reset to
// zero.
void* map_zeroed(std::size_t bytes);
void unmap_zeroed(void* p, std::size_t bytes);
void rezero(void* p, std::size_t bytes);
}  // namespace detail

template <typename T>
class ZeroedTable {
  static_assert(std::is_trivially_copyable_v<T>, "entries are created as zero bytes, never constructed");

 public:
  explicit ZeroedTable(std::size_t size)
      : entries_(static_cast<T*>(detail::map_zeroed(size * sizeof(T)))), size_(size) {}
  ~ZeroedTable() { detail::unmap_zeroed(entries_, size_ * sizeof(T)); }
  ZeroedTable(const ZeroedTable&) = delete;
  ZeroedTable& operator=(const ZeroedTable&) = delete;

  T& operator[](std::size_t i) { return entries_[i]; }
  const T& operator[](std::size_t i) const { return entries_[i]; }
  std::size_t size() const { return size_; }
  // Every entry back to zero bytes.
  void clear() { detail::rezero(entries_, size_ * sizeof(T)); }

 private:
  T* entries_;
  std::size_t size_;
};

}  // namespace overhead::tok
