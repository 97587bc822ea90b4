// The stop strings the worker matches on its own detokenized text (pipe/stop_strings.hpp): what
// it passes on, however the text is split, is the text cut before the stop string that ends first, and
// nothing that may still become a stop string is passed on before it is known not to.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "pipe/stop_strings.hpp"

namespace overhead::pipe {
namespace {

// The text a whole answer gives, byte by byte: cut before the stop string that ends first (of two
// that end at the same byte, the longer).
std::string cut(const std::string& text, const std::vector<std::string>& stops) {
  for (std::size_t end = 1; end <= text.size(); ++end) {
    std::size_t best = std::string::npos;
    for (const auto& s : stops)
      if (!s.empty() && s.size() <= end && text.compare(end - s.size(), s.size(), s) == 0)
        best = std::min(best, end - s.size());
    if (best != std::string::npos) return text.substr(0, best);
  }
  return text;
}

// Feeds `pieces` and checks every piece's output, then returns the concatenation.
std::string feed(const std::vector<std::string>& pieces, const std::vector<std::string>& stops) {
  StopStrings s(stops);
  std::string all, seen;
  for (const auto& p : pieces) {
    seen += p;
    std::string out;
    const bool stopped = s.push(p, out);
    all += out;
    if (!stopped) {
      // Held back exactly the longest tail of what came that a stop string starts with.
      const std::size_t held = seen.size() - all.size();
      for (const auto& stop : stops)
        for (std::size_t n = 1; n < stop.size() && n <= seen.size(); ++n)
          if (seen.compare(seen.size() - n, n, stop, 0, n) == 0) {
            EXPECT_GE(held, n) << "a possible stop string was passed on";
          }
    }
  }
  std::string rest;
  s.finish(rest);
  return all + rest;
}

TEST(StopStrings, PassesTheTextCutBeforeTheFirstStopStringWhereverItIsSplit) {
  const std::vector<std::vector<std::string>> stop_sets = {
      {"\n\n"}, {"END", "ENDING"}, {"ab", "b"}, {"日本"}, {"aaa"}, {"x", ""}, {"<|eot|>", "###", "\n\nUser:"}};
  const std::vector<std::string> texts = {
      "Hello world.\n\nNext paragraph", "THE ENDING IS NEAR, THE END", "xxab", "これは日本語です", "aa aaaa",
      "no stop here at all", "a tricky <|eo <|eot|> tail", "### heading", "line\n\nUser: hi", ""};
  for (const auto& stops : stop_sets)
    for (const auto& text : texts) {
      const std::string want = cut(text, stops);
      // Every single split point, and byte by byte.
      for (std::size_t i = 0; i <= text.size(); ++i)
        EXPECT_EQ(feed({text.substr(0, i), text.substr(i)}, stops), want) << text << " split at " << i;
      std::vector<std::string> bytes;
      for (const char c : text) bytes.emplace_back(1, c);
      EXPECT_EQ(feed(bytes, stops), want) << text << " byte by byte";
    }
}

TEST(StopStrings, RandomTextsAndSplitsAgreeWithTheWholeText) {
  std::mt19937 rng(7);
  const std::string alphabet = "ab\nE";
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> stops;
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) {
      std::string s;
      for (std::size_t k = 0, len = 1 + rng() % 4; k < len; ++k) s += alphabet[rng() % alphabet.size()];
      stops.push_back(s);
    }
    std::string text;
    for (std::size_t k = 0, len = rng() % 24; k < len; ++k) text += alphabet[rng() % alphabet.size()];
    std::vector<std::string> pieces;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t len = 1 + rng() % 5;
      pieces.push_back(text.substr(at, len));
      at += len;
    }
    ASSERT_EQ(feed(pieces, stops), cut(text, stops)) << "text '" << text << "'";
  }
}

TEST(StopStrings, AfterAStopNothingMorePasses) {
  StopStrings s(std::vector<std::string>{"stop"});
  std::string out;
  EXPECT_TRUE(s.push("go stop and more", out));
  EXPECT_EQ(out, "go ");
  EXPECT_TRUE(s.stopped());
  EXPECT_TRUE(s.push("later text", out));
  s.finish(out);
  EXPECT_EQ(out, "go ");
}

}  // namespace
}  // namespace overhead::pipe
