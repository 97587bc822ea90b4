// The raw-text nesting check (util/json_depth.hpp): brackets inside strings do not count, the scan
// stops past the limit, and a document as deep as the limit passes.
#include <gtest/gtest.h>

#include <string>

#include "util/json_depth.hpp"

namespace {

using overhead::util::json_nesting_depth;
using overhead::util::json_too_deep;
using overhead::util::kMaxJsonDepth;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonDepth, CountsArraysAndObjects) {
  EXPECT_EQ(json_nesting_depth("1"), 0u);
  EXPECT_EQ(json_nesting_depth("{}"), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a":[{"b":[]}],"c":{}})"), 4u);
}

TEST(JsonDepth, IgnoresBracketsInStringsAndEscapedQuotes) {
  EXPECT_EQ(json_nesting_depth(R"({"a":"[[[[{{{{"})"), 1u);
  EXPECT_EQ(json_nesting_depth(R"({"a":"\"[[[[","b":"\\"})"), 1u);
  EXPECT_EQ(json_nesting_depth(R"(["\\",[1]])"), 2u);
}

TEST(JsonDepth, TheLimitItselfPassesOneMoreIsRefused) {
  EXPECT_FALSE(json_too_deep(nested(kMaxJsonDepth)));
  EXPECT_TRUE(json_too_deep(nested(kMaxJsonDepth + 1)));
}

TEST(JsonDepth, StopsEarlyOnHugeNesting) {
  // 200,000 levels: the scan returns at the first bracket past the limit.
  const std::string deep = R"({"messages":[{"role":"user","content":"hi","x":)" + nested(200000) + "}]}";
  EXPECT_EQ(json_nesting_depth(deep), kMaxJsonDepth + 1);
}

}  // namespace
