#include "tok/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace overhead::tok {

std::shared_ptr<const MappedFile> MappedFile::open(const std::string& path, Populate populate) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return nullptr;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  const int flags = MAP_PRIVATE | (populate == Populate::kYes ? MAP_POPULATE : 0);
  void* p = ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
  ::close(fd);  // the mapping keeps the file open
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<const MappedFile>(new MappedFile(static_cast<const unsigned char*>(p), size));
}

MappedFile::~MappedFile() { ::munmap(const_cast<unsigned char*>(data_), size_); }

}  // namespace overhead::tok
