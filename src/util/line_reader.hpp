// Reads a text file line by line, transparently gunzipping `.gz` files (zlib), so the bundled
// data can stay compressed in the repository.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace overhead::util {

class LineReader {
 public:
  // Throws std::runtime_error naming the path when the file cannot be opened.
  explicit LineReader(const std::string& path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its '\n' (and without a trailing '\r', or a UTF-8 byte order mark on the
  // first line); false at end of file. Throws std::runtime_error naming the path on a read error
  // or a truncated .gz file, so a cut-off last line is never handed on as input.
  bool next(std::string& line);
  // 1-based number of the line last returned by next().
  std::size_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  std::size_t line_number_ = 0;
};

// Whole file (gunzipped when it ends in .gz) as one string.
std::string read_file(const std::string& path);
// All lines of a file.
std::vector<std::string> read_lines(const std::string& path);

}  // namespace overhead::util
