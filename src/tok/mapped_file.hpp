// A whole file mapped read-only into memory (the compiled tokenizer cache). The mapping stays
// valid while any shared_ptr to it lives, even if the file is replaced on disk meanwhile (writers
// always rename a new file into place, never rewrite one that may be mapped).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace overhead::tok {

class MappedFile {
 public:
  // kYes maps every page at once (for a file that is read in full right away).
  enum class Populate { kNo, kYes };
  // nullptr when the file cannot be opened or mapped (missing, unreadable, a folder, empty).
  static std::shared_ptr<const MappedFile> open(const std::string& path, Populate populate = Populate::kNo);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const unsigned char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  MappedFile(const unsigned char* data, std::size_t size) : data_(data), size_(size) {}
  const unsigned char* data_;
  std::size_t size_;
};

}  // namespace overhead::tok
