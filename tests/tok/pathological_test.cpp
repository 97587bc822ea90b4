// Linear time on inputs built to break naive BPE and backtracking regexes: a 1 MB run of one
// letter, 1 MB of spaces, and a 100k-character line with no split point. Each must cost within a
// generous factor of ordinary text of the same size (the bound catches quadratic behaviour, which
// would be thousands of times slower, not ordinary noise).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tok/tokenizer.hpp"
#include "util/line_reader.hpp"

namespace overhead::tok {
namespace {

constexpr double kGenerousFactor = 40.0;

double seconds_to_encode(const Tokenizer& t, const std::string& text) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto n = t.count(text, false);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(n, 0u);
  return s;
}

// Ordinary text: MT-Bench prompts and answers, concatenated up to `bytes`.
std::string normal_text(std::size_t bytes) {
  util::LineReader reader(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz");
  std::string text, line;
  while (text.size() < bytes && reader.next(line)) text += line;
  text.resize(bytes);
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0) text.pop_back();
  return text;
}

class PathologicalTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PathologicalTest, StaysLinear) {
  const auto t = Tokenizer::load(GetParam());
  const std::size_t mb = 1 << 20;
  const double normal = seconds_to_encode(*t, normal_text(mb));
  std::string kana_line;
  while (kana_line.size() < 100000 * 3) kana_line += "\xE3\x81\x82\xE3\x81\x84\xE3\x81\x86";  // あいう...
  const std::pair<const char*, std::string> cases[] = {
      {"1 MB of 'a'", std::string(mb, 'a')},
      {"1 MB of spaces", std::string(mb, ' ')},
      {"1 MB of newlines", std::string(mb, '\n')},
      {"100k-character line without a split point", kana_line},
  };
  for (const auto& [name, text] : cases) {
    const double s = seconds_to_encode(*t, text);
    EXPECT_LT(s, kGenerousFactor * normal * (static_cast<double>(text.size()) / mb) + 0.05)
        << GetParam() << ", " << name << ": " << s << " s against " << normal << " s for 1 MB of normal text";
  }
}

INSTANTIATE_TEST_SUITE_P(SeedTokenizers, PathologicalTest,
                         ::testing::Values("llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4", "o200k"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-' || c == '.') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace overhead::tok
