// LineReader, which every command's input goes through: a UTF-8 byte order mark is not part of the
// first line, and a .gz file cut short is an error naming the file, not a malformed last line.
#include <gtest/gtest.h>

#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "util/line_reader.hpp"

namespace {

namespace fs = std::filesystem;

fs::path temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("line_reader_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

void write_gz(const fs::path& p, const std::string& text) {
  gzFile f = gzopen(p.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
}

std::vector<std::string> lines_of(const fs::path& p) { return overhead::util::read_lines(p.string()); }

TEST(LineReader, AByteOrderMarkIsNotPartOfTheFirstLine) {
  const fs::path plain = temp_path("bom.jsonl");
  std::ofstream(plain, std::ios::binary) << "\xEF\xBB\xBF{\"a\":1}\r\n\xEF\xBB\xBF{\"b\":2}\n";
  // Only the first line's mark is a BOM; later the same bytes are text (U+FEFF) and are kept.
  EXPECT_EQ(lines_of(plain), (std::vector<std::string>{"{\"a\":1}", "\xEF\xBB\xBF{\"b\":2}"}));
  const fs::path gz = temp_path("bom.jsonl.gz");
  write_gz(gz, "\xEF\xBB\xBF{\"a\":1}\n");
  EXPECT_EQ(lines_of(gz), (std::vector<std::string>{"{\"a\":1}"}));
}

TEST(LineReader, ATruncatedGzipFileIsAnErrorNamingIt) {
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "{\"id\":\"" + std::to_string(i) + "\",\"text\":\"some words to compress\"}\n";
  const fs::path whole = temp_path("whole.jsonl.gz");
  write_gz(whole, text);
  EXPECT_EQ(lines_of(whole).size(), 2000u);
  const auto size = fs::file_size(whole);
  for (const auto cut : {size - 4, size / 2, std::uintmax_t{20}}) {
    const fs::path part = temp_path("cut" + std::to_string(cut) + ".jsonl.gz");
    fs::copy_file(whole, part, fs::copy_options::overwrite_existing);
    fs::resize_file(part, cut);
    try {
      (void)lines_of(part);
      ADD_FAILURE() << "a gzip file cut at " << cut << " of " << size << " bytes read without an error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(part.string() + ": truncated gzip file"), std::string::npos) << e.what();
    }
  }
}

}  // namespace

namespace {

using overhead::util::LineReader;
using overhead::util::LineTooLongError;

// A long line costs time linear in its length: each byte is searched for '\n' once. The reader
// used to search the whole pending line again after each 64 KiB read, so an 8 MiB line cost
// about 500 MB of searching (25 MB took 11 s).
TEST(LineReaderLimits, ALongLineIsSearchedOnce) {
  const fs::path p = temp_path("long_line.jsonl");
  const std::size_t size = std::size_t{8} << 20;
  {
    std::ofstream out(p, std::ios::binary);
    out << std::string(size, 'x') << "\nshort\n";
  }
  LineReader reader(p.string());
  std::string line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line.size(), size);
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "short");
  EXPECT_FALSE(reader.next(line));
  EXPECT_LE(reader.bytes_searched(), size + 7);
}

TEST(LineReaderLimits, ALineOverTheLimitIsAnErrorNamingFileAndLineAndTheNextLineFollows) {
  const fs::path p = temp_path("over.jsonl");
  std::ofstream(p, std::ios::binary) << "one\n" << std::string(5000, 'y') << "\nthree\n" << std::string(300000, 'z') << "\nfive";
  LineReader reader(p.string(), 1000);
  std::string line;
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "one");
  try {
    (void)reader.next(line);
    FAIL() << "a 5000-byte line passed a 1000-byte limit";
  } catch (const LineTooLongError& e) {
    EXPECT_EQ(e.line_number(), 2u);
    EXPECT_NE(std::string(e.what()).find(p.string() + ":2: line is longer than 1000 bytes"), std::string::npos) << e.what();
  }
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "three");
  EXPECT_EQ(reader.line_number(), 3u);
  EXPECT_THROW((void)reader.next(line), LineTooLongError);  // spans several reads
  ASSERT_TRUE(reader.next(line));
  EXPECT_EQ(line, "five");
  EXPECT_EQ(reader.line_number(), 5u);
  EXPECT_FALSE(reader.next(line));
}

// A file with no newline at all: the reader stops at the limit instead of growing its buffer
// until memory runs out.
TEST(LineReaderLimits, DevZeroStopsAtTheLimit) {
  LineReader reader("/dev/zero", std::size_t{4} << 20);
  std::string line;
  EXPECT_THROW((void)reader.next(line), LineTooLongError);
  EXPECT_LE(reader.bytes_searched(), (std::size_t{4} << 20) + (std::size_t{1} << 17));
}

}  // namespace
