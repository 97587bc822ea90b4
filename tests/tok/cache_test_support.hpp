// Shared by the compiled-cache tests: temporary folders, small tokenizer.json files of both
// model families written by the test, raw access to a cache file (read, write, patch a byte,
// re-seal the checksum) and the header offsets the tamper cases aim at.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace overhead::tok::cache_test {

// A fresh, empty folder under the system temp folder, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A byte-level BPE tokenizer (GPT-2 byte mapping, ByteLevel pre-tokenizer and decoder, one
// special token): all 256 byte tokens plus `merges` ("left right" over raw ASCII text, with '_'
// standing for a space).
nlohmann::json byte_level_tokenizer(const std::vector<std::string>& merges);
// A SentencePiece-style BPE tokenizer (Metaspace-free, byte fallback, <unk>): ASCII letters, a
// few kana, the 256 <0xXX> tokens and `merges` over them.
nlohmann::json char_level_tokenizer(const std::vector<std::string>& merges);

void write_file(const std::filesystem::path& path, const std::string& bytes);
std::string read_file(const std::filesystem::path& path);

// Header layout of a cache file (tokenizer_cache.cpp): the fields the tamper cases change.
inline constexpr std::size_t kVersionOffset = 8;
inline constexpr std::size_t kHeaderSizeOffset = 12;
// The payload checksum is the header's last field, the payload size the one before it.
std::size_t header_size(const std::string& cache);
// Recomputes the payload checksum after a deliberate edit of the payload.
void reseal(std::string& cache);

}  // namespace overhead::tok::cache_test
