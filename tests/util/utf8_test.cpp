// The one UTF-8 unit: repair, validation, both decoders, encoding and counting.
#include <gtest/gtest.h>

#include <vector>

#include "util/utf8.hpp"

namespace overhead::util::utf8 {
namespace {

TEST(Utf8Test, ValidTextIsUnchanged) {
  const std::string s = "abc \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80";
  EXPECT_TRUE(is_valid(s));
  EXPECT_EQ(repair(s), s);
}

// One U+FFFD per maximal invalid subsequence, as Rust's from_utf8_lossy and Python's
// decode("utf-8", "replace") do.
TEST(Utf8Test, RepairReplacesMaximalSubparts) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(repair("a\xFF" "b"), "a" + fffd + "b");
  EXPECT_EQ(repair("\xE6\x97"), fffd);                      // truncated 3-byte sequence: one
  EXPECT_EQ(repair("\xE6\x97" "a"), fffd + "a");
  EXPECT_EQ(repair("\xC0\xAF"), fffd + fffd);                // overlong lead: each byte
  EXPECT_EQ(repair("\xED\xA0\x80"), fffd + fffd + fffd);    // surrogate: each byte
  EXPECT_EQ(repair("\xF4\x90\x80\x80"), fffd + fffd + fffd + fffd);  // above U+10FFFF
  EXPECT_EQ(repair("\xF0\x9F\x98"), fffd);
  EXPECT_FALSE(is_valid("\x80"));
}

// A byte budget cuts before a character it would split, never inside it; invalid bytes are left
// for repair(), and excerpt() gives valid text whatever came in.
TEST(Utf8Test, TruncateCutsOnACharacterBoundary) {
  const std::string s = "ab\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80";  // a b é 日 😀
  EXPECT_EQ(truncate(s, 100), s);
  EXPECT_EQ(truncate(s, 2), "ab");
  EXPECT_EQ(truncate(s, 3), "ab");                // é would be cut after its lead
  EXPECT_EQ(truncate(s, 4), "ab\xC3\xA9");
  EXPECT_EQ(truncate(s, 5), "ab\xC3\xA9");        // 日 cut after 1 byte
  EXPECT_EQ(truncate(s, 6), "ab\xC3\xA9");        // and after 2
  EXPECT_EQ(truncate(s, 10), "ab\xC3\xA9\xE6\x97\xA5");  // 😀 cut after 3
  EXPECT_EQ(truncate(s, 0), "");
  for (std::size_t n = 0; n <= s.size(); ++n) EXPECT_TRUE(is_valid(truncate(s, n))) << n;
  // Stray continuation bytes are no character: kept, for repair() to replace.
  EXPECT_EQ(truncate("a\x80\x80\x80\x80\x80", 3), "a\x80\x80");
  EXPECT_EQ(excerpt("a\xFF\xC3\xA9", 4), "a\xEF\xBF\xBD\xC3\xA9");
  EXPECT_EQ(excerpt("a\xFF\xC3\xA9", 3), "a\xEF\xBF\xBD");
}

TEST(Utf8Test, DecodesAndCounts) {
  const std::string s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80";
  std::size_t i = 0;
  EXPECT_EQ(next(s, i), U'a');
  EXPECT_EQ(next(s, i), U'\u00E9');
  EXPECT_EQ(next(s, i), U'\u65E5');
  EXPECT_EQ(next(s, i), U'\U0001F600');
  EXPECT_EQ(i, s.size());
  EXPECT_EQ(count_code_points(s), 4u);
  std::string out;
  append(out, U'\U0001F600');
  EXPECT_EQ(out, "\xF0\x9F\x98\x80");
}

// The lenient decoder reads ill-formed input without running past its end: a byte that does not
// start a complete bit pattern decodes as itself, and on valid text it agrees with next().
TEST(Utf8Test, LenientDecodingTakesBadBytesAsThemselves) {
  const std::string valid = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80";
  std::size_t i = 0, j = 0;
  while (i < valid.size()) EXPECT_EQ(next_lenient(valid, i), next(valid, j));
  EXPECT_EQ(i, j);
  EXPECT_EQ(count_lenient(valid), count_code_points(valid));

  const std::string bad = "\x80\xE6\x97" "a\xFF\xF0\x9F";  // stray continuation, truncated, invalid lead
  std::vector<char32_t> got;
  for (std::size_t k = 0; k < bad.size();) got.push_back(next_lenient(bad, k));
  EXPECT_EQ(got, (std::vector<char32_t>{0x80, 0xE6, 0x97, U'a', 0xFF, 0xF0, 0x9F}));
  EXPECT_EQ(count_lenient(bad), 7u);
}

TEST(Utf8Test, EncodesEveryLength) {
  for (const char32_t c : {char32_t(0x24), char32_t(0xA2), char32_t(0x20AC), char32_t(0x10348), char32_t(0x10FFFF)}) {
    std::string out;
    append(out, c);
    EXPECT_EQ(out.size(), sequence_length(static_cast<unsigned char>(out[0])));
    EXPECT_TRUE(is_valid(out));
    std::size_t i = 0;
    EXPECT_EQ(next(out, i), c);
    std::size_t start = 9;
    EXPECT_EQ(previous(out, out.size(), start), c);
    EXPECT_EQ(start, 0u);
  }
}

}  // namespace
}  // namespace overhead::util::utf8
