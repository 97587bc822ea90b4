#include <gtest/gtest.h>

#include "tok/utf8.hpp"

namespace overhead::tok::utf8 {
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

}  // namespace
}  // namespace overhead::tok::utf8
