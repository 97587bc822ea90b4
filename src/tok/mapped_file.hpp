// A whole file mapped read-only into memory (the compiled tokenizer cache). The mapping stays
// valid while any shared_ptr to it lives, even if the file is replaced on disk meanwhile (writers
// always rename a new file into place, never rewrite one that may be mapped).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <memory>
#include <string>

namespace overhead::tok {

class MappedFile {
 public:
  // nullptr when the file cannot be opened or mapped (missing, unreadable, a folder, empty).
  // Pages are read in as they are touched: a start that looks up a few tokens reads a few pages.
  static std::shared_ptr<const MappedFile> open(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }
  // What fstat said of the mapped file (the one mapped, even if the path is renamed over since).
  const struct stat& status() const { return status_; }
  // Maps every page now, before a pass that reads them all: one call instead of a page fault for
  // each run of pages. Only a hint; the bytes are readable either way.
  void prefault() const;

 private:
  MappedFile(const unsigned char* data, std::size_t size, const struct stat& status)
      : data_(data), size_(size), status_(status) {}
  const unsigned char* data_;
  std::size_t size_;
  struct stat status_;
};

}  // namespace overhead::tok
