#include "util/line_reader.hpp"

#include <zlib.h>

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

  bool fill() {
    if (eof) return false;
    if (pos > 0) {
      buffer.erase(0, pos);
      pos = 0;
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

LineReader::LineReader(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  impl_->path = path;
  impl_->file = gzopen(path.c_str(), "rb");
  if (impl_->file == nullptr) throw std::runtime_error(path + ": cannot open file");
  gzbuffer(impl_->file, 1 << 17);
}

LineReader::~LineReader() {
  if (impl_ && impl_->file != nullptr) gzclose(impl_->file);
}

bool LineReader::next(std::string& line) {
  Impl& s = *impl_;
  for (;;) {
    const std::size_t nl = s.buffer.find('\n', s.pos);
    if (nl != std::string::npos) {
      line.assign(s.buffer, s.pos, nl - s.pos);
      s.pos = nl + 1;
      break;
    }
    if (!s.fill()) {
      if (s.pos >= s.buffer.size()) return false;
      line.assign(s.buffer, s.pos, std::string::npos);
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

std::string read_file(const std::string& path) {
  if (ends_with(path, ".gz")) {
    LineReader reader(path);
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
