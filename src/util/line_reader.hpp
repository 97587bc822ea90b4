// Reads a text file line by line, transparently gunzipping `.gz` files (zlib), so the bundled
// data can stay compressed in the repository.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace overhead::util {

// The longest line read when a command is not told otherwise (--max-line-bytes): far above any
// record of the seed's data, and what keeps a file without newlines (/dev/zero) from growing the
// buffer without bound.
inline constexpr std::size_t kDefaultMaxLineBytes = std::size_t{64} << 20;

// A line longer than the reader's limit; its message names the file, the line and the limit.
// The reader has left the line behind: the next call to next() returns the line after it.
class LineTooLongError : public std::runtime_error {
 public:
  LineTooLongError(const std::string& path, std::size_t line_number, std::size_t limit);
  std::size_t line_number() const { return line_number_; }

 private:
  std::size_t line_number_;
};

class LineReader {
 public:
  // Throws std::runtime_error naming the path when the file cannot be opened. "-" reads standard
  // input (gunzipped too when it is gzip data). Lines longer than `max_line_bytes` are refused
  // (LineTooLongError) after buffering at most that many bytes of them.
  explicit LineReader(const std::string& path, std::size_t max_line_bytes = kDefaultMaxLineBytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its '\n' (and without a trailing '\r', or a UTF-8 byte order mark on the
  // first line); false at end of file. Throws std::runtime_error naming the path on a read error
  // or a truncated .gz file, so a cut-off last line is never handed on as input, and
  // LineTooLongError past the limit. Time is linear in the bytes read.
  bool next(std::string& line);
  // 1-based number of the line last returned by next().
  std::size_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  // Bytes looked at while searching for line ends so far: at most the bytes read (each is looked
  // at once), which is what keeps a long line's cost linear. For tests and benchmarks.
  std::size_t bytes_searched() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  std::size_t line_number_ = 0;
  std::size_t max_line_bytes_;
};

// Whole file (gunzipped when it ends in .gz) as one string.
std::string read_file(const std::string& path);
// All lines of a file.
std::vector<std::string> read_lines(const std::string& path);

}  // namespace overhead::util
