#include "tok/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace overhead::tok {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return nullptr;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file open
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<const unsigned char*>(p), size, st));
}

void MappedFile::prefault() const {
  void* p = const_cast<unsigned char*>(data_);
#ifdef MADV_POPULATE_READ
  if (::madvise(p, size_, MADV_POPULATE_READ) == 0) return;
#endif
  ::madvise(p, size_, MADV_WILLNEED);  // kernels before 5.14: read-ahead, faults stay
}

MappedFile::~MappedFile() { ::munmap(const_cast<unsigned char*>(data_), size_); }

}  // namespace overhead::tok
