#include "util/line_reader.hpp"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace overhead::util {

namespace {
bool ends_with(const std::string& s, const char* suffix) {
  const std::string x(suffix);
  return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}
}  // namespace

// gzFile reads plain files as well, but we keep the intent visible: .gz means compressed.
struct LineReader::Impl {
  std::string path;
  gzFile file = nullptr;
  std::string buffer;
  std::size_t pos = 0;
  bool eof = false;
  bool skip_rest = false;  // the current line was refused as too long: drop bytes up to its '\n'
  std::size_t searched_total = 0;  // bytes_searched()

  // The first '\n' at or after `from`, counting the bytes looked at.
  std::size_t find_newline(std::size_t from) {
    const std::size_t nl = buffer.find('\n', from);
    searched_total += (nl == std::string::npos ? buffer.size() : nl + 1) - std::min(from, buffer.size());
    return nl;
  }

  // Appends the next chunk (after dropping the bytes before `pos`); false at end of file.
  bool fill() {
    if (eof) return false;
    if (pos > 0) {
      buffer.erase(0, pos);
      pos = 0;
      // After an outsized line the buffer keeps its capacity; give it back once little is pending.
      if (buffer.capacity() > (std::size_t{4} << 20) && buffer.size() < buffer.capacity() / 4) buffer.shrink_to_fit();
    }
    char chunk[1 << 16];
    const int n = gzread(file, chunk, sizeof chunk);
    int errnum = Z_OK;
    if (n < 0) throw std::runtime_error(path + ": read error: " + gzerror(file, &errnum));
    if (n == 0) {
      // zlib ends a stream cut short like a complete one, and says so only here: its last line
      // would otherwise reach the caller as a line of malformed input.
      gzerror(file, &errnum);
      if (errnum == Z_BUF_ERROR)
        throw std::runtime_error(path +
                                 ": truncated gzip file (it ends in the middle of its compressed data); "
                                 "copy or compress it again");
      eof = true;
      return false;
    }
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
};

LineTooLongError::LineTooLongError(const std::string& path, std::size_t line_number, std::size_t limit)
    : std::runtime_error(path + ":" + std::to_string(line_number) + ": line is longer than " + std::to_string(limit) +
                         " bytes (--max-line-bytes); is this a JSONL file?"),
      line_number_(line_number) {}

LineReader::LineReader(const std::string& path, std::size_t max_line_bytes)
    : impl_(std::make_unique<Impl>()), path_(path), max_line_bytes_(max_line_bytes) {
  impl_->path = path;
  if (path == "-") {
    const int fd = ::dup(0);  // gzclose closes it; standard input stays open
    impl_->file = fd < 0 ? nullptr : gzdopen(fd, "rb");
    if (impl_->file == nullptr && fd >= 0) ::close(fd);
  } else {
    impl_->file = gzopen(path.c_str(), "rb");
  }
  if (impl_->file == nullptr) throw std::runtime_error(path + ": cannot open file");
  gzbuffer(impl_->file, 1 << 17);
}

LineReader::~LineReader() {
  if (impl_ && impl_->file != nullptr) gzclose(impl_->file);
}

namespace {
// Lines at least this long are handed over from the read buffer rather than copied out of it.
constexpr std::size_t kHandOverBytes = std::size_t{1} << 20;
}  // namespace

bool LineReader::next(std::string& line) {
  Impl& s = *impl_;
  while (s.skip_rest) {  // the rest of a refused line, read and dropped without keeping it
    const std::size_t nl = s.find_newline(s.pos);
    if (nl != std::string::npos) {
      s.pos = nl + 1;
      s.skip_rest = false;
    } else {
      s.pos = s.buffer.size();
      if (!s.fill()) s.skip_rest = false;
    }
  }
  // Bytes of the pending line already searched for '\n': each byte is looked at once, however
  // many fills a long line takes (searching from the line's start again made it quadratic).
  std::size_t searched = 0;
  for (;;) {
    const std::size_t nl = s.find_newline(s.pos + searched);
    const std::size_t length = (nl == std::string::npos ? s.buffer.size() : nl) - s.pos;
    if (length > max_line_bytes_) {
      s.pos = nl == std::string::npos ? s.buffer.size() : nl + 1;
      s.skip_rest = nl == std::string::npos;
      throw LineTooLongError(path_, ++line_number_, max_line_bytes_);
    }
    if (nl != std::string::npos) {
      if (s.pos == 0 && nl >= kHandOverBytes) {
        // A long line fills the buffer from its start: hand the buffer over instead of copying
        // it, so the line is held once, not twice; what follows it (one read at most) stays.
        std::string rest = s.buffer.substr(nl + 1);
        s.buffer.resize(nl);
        line.swap(s.buffer);
        s.buffer = std::move(rest);
        s.pos = 0;
        break;
      }
      line.assign(s.buffer, s.pos, nl - s.pos);
      s.pos = nl + 1;
      break;
    }
    searched = s.buffer.size() - s.pos;
    if (!s.fill()) {
      if (s.pos >= s.buffer.size()) return false;
      if (s.pos == 0 && s.buffer.size() >= kHandOverBytes) {
        line.swap(s.buffer);
        s.buffer.clear();
      } else {
        line.assign(s.buffer, s.pos, std::string::npos);
      }
      s.pos = s.buffer.size();
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // A UTF-8 byte order mark (Windows editors write one) is not part of the first line's text.
  if (line_number_ == 0 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  ++line_number_;
  return true;
}

std::size_t LineReader::bytes_searched() const { return impl_->searched_total; }

std::string read_file(const std::string& path) {
  if (ends_with(path, ".gz")) {
    LineReader reader(path, SIZE_MAX);  // a whole file is wanted, however long its lines
    std::string all, line;
    while (reader.next(line)) {
      all += line;
      all += '\n';
    }
    return all;
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error(path + ": cannot open file");
  std::string all;
  char chunk[1 << 16];
  std::size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) all.append(chunk, n);
  std::fclose(f);
  return all;
}

std::vector<std::string> read_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

}  // namespace overhead::util
