#include "tok/zeroed_table.hpp"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace overhead::tok::detail {

void* map_zeroed(std::size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return p;
}

void unmap_zeroed(void* p, std::size_t bytes) { ::munmap(p, bytes); }

void rezero(void* p, std::size_t bytes) {
  // A memset, not MADV_DONTNEED: a full memo is cleared while it is in use, and dropped pages
  // would each cost a page fault again right after.
  std::memset(p, 0, bytes);
}

}  // namespace overhead::tok::detail
