// One long text costs memory within a few times its size: a 25 MB line once peaked at 510 MB
// (its pieces, 24 bytes per word, and the regex matches behind them, all held at once). The peak
// is read from the kernel's high-water mark (VmHWM), reset just before encoding, so what the test
// itself holds (the text) and the tokenizer's load are not counted.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "tok/tokenizer.hpp"
#include "util/line_reader.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {
namespace {

// VmHWM or VmRSS of this process, in bytes (0 when /proc cannot tell).
std::size_t status_bytes(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoull(line.substr(key.size() + 1)) * 1024;
  return 0;
}

// Resets VmHWM to the current RSS (Linux 4.0+); false when the kernel does not allow it.
bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return out.good();
}

// MT-Bench prompts and answers, concatenated, repeated up to `bytes`, cut at a character.
std::string long_text(std::size_t bytes) {
  util::LineReader reader(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz");
  std::string chunk, line;
  while (chunk.size() < (1u << 20) && reader.next(line)) chunk += line;
  std::string text;
  text.reserve(bytes + chunk.size());
  while (text.size() < bytes) text += chunk;
  text.resize(util::utf8::truncate(text, bytes).size());
  return text;
}

class LongTextMemoryTest : public ::testing::TestWithParam<std::string> {};

TEST_P(LongTextMemoryTest, PeakIsAFewTimesTheText) {
  const auto t = Tokenizer::load(GetParam());
  const std::string text = long_text(std::size_t{16} << 20);
  (void)t->encode("warm up the thread's scratch space");
  if (!reset_peak()) GTEST_SKIP() << "/proc/self/clear_refs cannot reset the peak here";
  const std::size_t before = status_bytes("VmRSS");
  const Ids ids = t->encode(text, false);
  const std::size_t grown = status_bytes("VmHWM") - before;
  ASSERT_GT(ids.size(), text.size() / 16);
  // The ids and one copy of the text are needed; 3 times the text leaves room for both and for
  // the allocator, and is far below the 12 to 20 times a text's pieces held at once cost. The
  // per-thread BPE caches (bounded, whatever the text: piece_cache.hpp, chunk_memo.hpp) come on top.
  constexpr std::size_t kCaches = std::size_t{24} << 20;
  EXPECT_LT(grown, 3 * text.size() + kCaches) << GetParam() << ": the peak grew by " << (grown >> 20) << " MiB for a "
                                    << (text.size() >> 20) << " MiB text";
}

INSTANTIATE_TEST_SUITE_P(SeedTokenizers, LongTextMemoryTest, ::testing::Values("llama-3.3-70b-instruct", "phi-4"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (char& c : n)
                             if (c == '-' || c == '.') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace overhead::tok
