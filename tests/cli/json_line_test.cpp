// Plain `tokenize` validates every input line whole: what a lazy parser skipped (trailing content,
// bad literals after the field, truncation, lone surrogates, invalid UTF-8) is an error line that
// says what is wrong and at which byte; of duplicate keys the last counts, as in Python.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

class TokenizeLines : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_tokenizer("phi-4")) GTEST_SKIP() << "tokenizer files not fetched: phi-4";
  }
  // Runs plain tokenize (no special tokens) on `lines` and returns the output lines.
  RunResult tokenize(const std::string& text) {
    const auto dir = temp_dir("jsonl");
    const std::string input = write_file(dir / "in.jsonl", text);
    return run_overhead("tokenize --no-special " + tokenizer_arg("phi-4") + " --input '" + input + "'");
  }
  static std::string error_of(const std::string& line) {
    const auto j = nlohmann::json::parse(line);  // every output line is valid JSON
    return j.contains("error") ? j["error"].get<std::string>() : "";
  }
};

// A blank line keeps its place in the output, as an error line that says what it is; the lines
// around it are encoded. Likewise for tokenize --chat and template.
TEST_F(TokenizeLines, ABlankLineIsAnErrorLineSayingSo) {
  const RunResult r = tokenize("{\"text\":\"a\"}\n  \n{\"text\":\"b\"}\n");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.lines.size(), 3u) << r.err;
  EXPECT_EQ(error_of(r.lines[0]), "");
  EXPECT_NE(error_of(r.lines[1]).find("line 2: blank line"), std::string::npos) << r.lines[1];
  EXPECT_EQ(error_of(r.lines[2]), "");
  const auto dir = temp_dir("jsonl-blank");
  const std::string chat =
      write_file(dir / "chat.jsonl", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n\n");
  for (const std::string& cmd : std::vector<std::string>{"template", "tokenize --chat"}) {
    const RunResult c = run_overhead(cmd + " " + tokenizer_arg("phi-4") + " --input '" + chat + "'");
    ASSERT_EQ(c.lines.size(), 2u) << cmd << c.err;
    EXPECT_NE(error_of(c.lines[1]).find("line 2: blank line"), std::string::npos) << cmd << c.lines[1];
  }
}

TEST_F(TokenizeLines, MalformedLinesAreErrorsWithByteOffsets) {
  const RunResult r = tokenize(
      "{\"text\":\"ok\"}{\"text\":\"two\"}\n"
      "{\"text\":\"ok\", \"x\": tru}\n"
      "{\"text\":\"ok\"\n"
      "{\"text\":\"\\ud800\"}\n"
      "{\"text\":\"\xff\"}\n"
      "\"just a string\"\n"
      "{\"text\":5}\n");
  EXPECT_EQ(r.exit_code, 1);
  ASSERT_EQ(r.lines.size(), 7u) << r.err;
  const std::string trailing = error_of(r.lines[0]);
  EXPECT_NE(trailing.find("line 1: invalid JSON at byte 13"), std::string::npos) << trailing;
  EXPECT_NE(trailing.find("end of input"), std::string::npos) << trailing;
  const std::string literal = error_of(r.lines[1]);
  EXPECT_NE(literal.find("line 2: invalid JSON at byte 22"), std::string::npos) << literal;
  EXPECT_NE(literal.find("invalid literal"), std::string::npos) << literal;
  const std::string truncated = error_of(r.lines[2]);
  EXPECT_NE(truncated.find("line 3: invalid JSON at byte 12"), std::string::npos) << truncated;
  EXPECT_NE(truncated.find("unexpected end of input"), std::string::npos) << truncated;
  const std::string surrogate = error_of(r.lines[3]);
  EXPECT_NE(surrogate.find("line 4: invalid JSON at byte"), std::string::npos) << surrogate;
  EXPECT_NE(surrogate.find("surrogate"), std::string::npos) << surrogate;
  const std::string utf8 = error_of(r.lines[4]);
  EXPECT_NE(utf8.find("line 5: invalid JSON at byte"), std::string::npos) << utf8;
  EXPECT_NE(utf8.find("UTF-8"), std::string::npos) << utf8;
  EXPECT_NE(error_of(r.lines[5]).find("line 6: expected a JSON object, got a string"), std::string::npos);
  EXPECT_NE(error_of(r.lines[6]).find("line 7: field \"text\" is a number, not a string"), std::string::npos);
}

// A line of 1 MiB or more is read by another parser (a SAX reader, for memory): each malformed
// line above, with a 1 MiB field in front, gets the same message at the byte shifted by that field,
// and the well-formed ones the same ids.
TEST_F(TokenizeLines, LongLinesAreCheckedAndReadTheSameWay) {
  const std::vector<std::string> lines = {
      "{\"text\":\"ok\"}{\"text\":\"two\"}", "{\"text\":\"ok\", \"x\": tru}", "{\"text\":\"ok\"",
      "{\"text\":\"\\ud800\"}", "{\"text\":\"\xff\"}", "{\"text\":5}", "{\"x\":1}", "{\"text\":[\"a\"]}",
      "{\"text\":\"first\",\"text\":\"second\"}", "{\"text\":\"second\",\"text\":null}",
      "{\"a\":{\"text\":\"nested\"},\"text\":\"\\ud83d\\ude00 caf\\u00e9\"}",
      std::string(2000, '[') + std::string(2000, ']')};
  const std::string pad = "\"pad\":\"" + std::string(1 << 20, 'x') + "\",";
  std::string short_input, long_input;
  for (const std::string& l : lines) {
    short_input += l + "\n";
    long_input += (l[0] == '{' ? "{" + pad + l.substr(1) : std::string(1 << 20, ' ') + l) + "\n";
  }
  const RunResult a = tokenize(short_input);
  const RunResult b = tokenize(long_input);
  ASSERT_EQ(a.lines.size(), lines.size()) << a.err;
  ASSERT_EQ(b.lines.size(), lines.size()) << b.err;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string expected = a.lines[i];
    const std::string at = "invalid JSON at byte ";
    if (const auto k = expected.find(at); k != std::string::npos) {
      const std::size_t e = expected.find(':', k);
      const std::size_t byte = std::stoul(expected.substr(k + at.size(), e - k - at.size()));
      const std::size_t shift = lines[i][0] == '{' ? pad.size() : std::size_t{1} << 20;
      expected = expected.substr(0, k + at.size()) + std::to_string(byte + shift) + expected.substr(e);
    }
    EXPECT_EQ(b.lines[i], expected) << "line " << i + 1;
  }
}

TEST_F(TokenizeLines, DuplicateKeysTakeTheLastAsPythonDoes) {
  const RunResult both = tokenize("{\"text\":\"first\",\"text\":\"second\"}\n{\"text\":\"second\"}\n");
  EXPECT_EQ(both.exit_code, 0) << both.err;
  ASSERT_EQ(both.lines.size(), 2u);
  EXPECT_EQ(both.lines[0], both.lines[1]);
}

TEST_F(TokenizeLines, ValidSurrogatePairsAndEscapesStillEncode) {
  const RunResult r = tokenize("{\"text\":\"\\ud83d\\ude00 \\u00e9\\n\"}\n{\"text\":\"\xf0\x9f\x98\x80 \xc3\xa9\\n\"}\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.lines.size(), 2u);
  EXPECT_EQ(r.lines[0], r.lines[1]);
  EXPECT_EQ(error_of(r.lines[0]), "");
}

}  // namespace
