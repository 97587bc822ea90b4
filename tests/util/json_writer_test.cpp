// The one JSON string escaper in its three styles: our JSON lines, and Python's json.dumps with
// ensure_ascii off and on. The expected strings were produced by CPython 3.11's json.dumps (our
// lines: the same as ensure_ascii=False except that DEL is escaped).
#include <gtest/gtest.h>

#include <string>

#include "util/json_writer.hpp"

namespace overhead::util {
namespace {

struct Case {
  const char* in;
  const char* lines;         // kJsonLines
  const char* dumps;         // json.dumps(s, ensure_ascii=False)
  const char* dumps_ascii;   // json.dumps(s)
};

const Case kCases[] = {
    {"", "\"\"", "\"\"", "\"\""},
    {"plain", "\"plain\"", "\"plain\"", "\"plain\""},
    {"q\"b\\s/", "\"q\\\"b\\\\s/\"", "\"q\\\"b\\\\s/\"", "\"q\\\"b\\\\s/\""},
    {"\x0a\x0d\x09\x08\x0c", "\"\\n\\r\\t\\b\\f\"", "\"\\n\\r\\t\\b\\f\"", "\"\\n\\r\\t\\b\\f\""},
    {"\x01\x02\x1f", "\"\\u0001\\u0002\\u001f\"", "\"\\u0001\\u0002\\u001f\"", "\"\\u0001\\u0002\\u001f\""},
    {"\x7f", "\"\\u007f\"", "\"\x7f\"", "\"\\u007f\""},
    {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac", "\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\"", "\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\"", "\"caf\\u00e9 \\u65e5\\u672c\""},
    {"\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"", "\"\xf0\x9f\x98\x80\"", "\"\\ud83d\\ude00\""},
    {"\xe2\x80\xa8\xe2\x80\xa9", "\"\xe2\x80\xa8\xe2\x80\xa9\"", "\"\xe2\x80\xa8\xe2\x80\xa9\"", "\"\\u2028\\u2029\""},
    {"mix\x7f\xc3\xa9\x02\xf4\x8f\xbf\xbf", "\"mix\\u007f\xc3\xa9\\u0002\xf4\x8f\xbf\xbf\"", "\"mix\x7f\xc3\xa9\\u0002\xf4\x8f\xbf\xbf\"", "\"mix\\u007f\\u00e9\\u0002\\udbff\\udfff\""},
};

std::string escaped(std::string_view s, JsonStringStyle style) {
  std::string out = "prefix:";
  append_json_string(out, s, style);
  return out.substr(7);
}

TEST(JsonString, MatchesPythonJsonDumpsInEveryStyle) {
  for (const auto& c : kCases) {
    EXPECT_EQ(escaped(c.in, kJsonLines), c.lines) << c.in;
    EXPECT_EQ(escaped(c.in, kPythonJsonDumps), c.dumps) << c.in;
    EXPECT_EQ(escaped(c.in, kPythonJsonDumpsAscii), c.dumps_ascii) << c.in;
  }
  // NUL inside the text is escaped, not a terminator.
  EXPECT_EQ(escaped(std::string_view("a\0b", 3), kJsonLines), "\"a\\u0000b\"");
}

// Ill-formed UTF-8 cannot come from Python; the rule: copied as is without ensure_ascii (the JSON
// parsers upstream validate), each bad byte as its own \u00XX with it.
TEST(JsonString, IllFormedBytes) {
  EXPECT_EQ(escaped("\xff\xe6\x97", kJsonLines), "\"\xff\xe6\x97\"");
  EXPECT_EQ(escaped("\xff\xe6\x97", kPythonJsonDumps), "\"\xff\xe6\x97\"");
  EXPECT_EQ(escaped("\xff\xe6\x97" "a", kPythonJsonDumpsAscii), "\"\\u00ff\\u00e6\\u0097a\"");
}

TEST(JsonIds, CommaSeparatedInBrackets) {
  std::string out;
  const std::uint32_t ids[] = {0, 7, 4294967295u};
  append_json_ids(out, ids);
  EXPECT_EQ(out, "[0,7,4294967295]");
  out.clear();
  append_json_ids(out, {});
  EXPECT_EQ(out, "[]");
}

}  // namespace
}  // namespace overhead::util
