// PreTokenizer::apply_in_batches gives the pieces apply() gives, in the same order: a long text is
// pre-tokenized in batches (to bound its memory), and encoding must not change with that. Checked
// on the seed tokenizers' pre-tokenizers (hand-written scanners) and on PCRE2 and literal splits,
// with texts of many batches whose cuts fall inside runs of spaces, newlines and digits.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tok/pre_tokenizer.hpp"
#include "tok/tokenizer.hpp"
#include "tok/tokenizer_impl.hpp"

namespace overhead::tok {
namespace {

// Every piece's text, in order.
std::vector<std::string> texts_of(const std::string& buffer, const std::vector<Piece>& pieces) {
  std::vector<std::string> out;
  for (const Piece& p : pieces) out.push_back(buffer.substr(p.begin, p.end - p.begin) + (p.at_origin ? "^" : ""));
  return out;
}

void expect_same_pieces(const PreTokenizer& pre, const std::string& text, const std::string& what) {
  std::string whole = text;
  std::vector<Piece> pieces{Piece{0, whole.size(), true}};
  pre.apply(whole, pieces);
  const auto expected = texts_of(whole, pieces);
  std::vector<std::string> batched;
  std::size_t batches = 0;
  pre.apply_in_batches(text, Piece{0, text.size(), true}, [&](std::string& b, std::vector<Piece>& ps) {
    ++batches;
    for (auto& s : texts_of(b, ps)) batched.push_back(std::move(s));
  });
  EXPECT_GT(batches, 2u) << what << ": the text must span several batches";
  EXPECT_TRUE(batched == expected) << what << ": " << batched.size() << " pieces in batches, " << expected.size() << " at once";
}

std::string mixed_text() {
  std::string text;
  for (int i = 0; text.size() < 1500000; ++i) {
    text += "Word" + std::to_string(i) + " it's   spaced\n\n  1234567 ";
    if (i % 97 == 0) text += std::string(5000, ' ');     // a run of spaces across a batch's end
    if (i % 89 == 0) text += std::string(3000, '\n');
    if (i % 83 == 0) text += "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E! ";
  }
  return text;
}

TEST(BatchedPreTokenizerTest, SeedPreTokenizersGiveTheSamePieces) {
  const std::string text = mixed_text();
  for (const char* name : {"llama-3.3-70b-instruct", "phi-4", "o200k"}) {
    const auto t = Tokenizer::load(name);
    ASSERT_TRUE(t->impl().pre_tokenizer) << name;
    expect_same_pieces(*t->impl().pre_tokenizer, text, name);
  }
}

TEST(BatchedPreTokenizerTest, RegexAndLiteralSplitsGiveTheSamePieces) {
  const std::string text = mixed_text();
  // A PCRE2 pattern no scanner implements, with empty matches (the search resumes one character
  // on), and the two behaviours that batch, inverted or not.
  for (const SplitBehavior b : {SplitBehavior::kIsolated, SplitBehavior::kRemoved}) {
    for (const bool invert : {false, true}) {
      const SplitPreTokenizer regex(Matcher::regex(R"(\d*|\s+(?!\S))"), b, invert);
      expect_same_pieces(regex, text, "regex");
      const SplitPreTokenizer literal(Matcher::literal(" "), b, invert);
      expect_same_pieces(literal, text, "literal");
    }
  }
  // A batching Split first, then steps that rebuild the buffer.
  std::vector<std::unique_ptr<PreTokenizer>> steps;
  steps.push_back(std::make_unique<SplitPreTokenizer>(Matcher::regex(R"(\s+)"), SplitBehavior::kIsolated, false));
  steps.push_back(std::make_unique<MetaspacePreTokenizer>("\xE2\x96\x81", MetaspacePreTokenizer::Prepend::kFirst, true));
  steps.push_back(std::make_unique<DigitsPreTokenizer>(false));
  expect_same_pieces(SequencePreTokenizer(std::move(steps)), text, "sequence");
}

}  // namespace
}  // namespace overhead::tok
