// Exactness against HF tokenizers: for every tokenizer name, every line of the committed goldens
// (scripts/make_tok_goldens.sh) must match what overhead::tok produces:
//   - the corpus (data/tok/corpus.jsonl): ids with and without special tokens, count(), and
//     decode() of the ids with skip_special_tokens false and true;
//   - a sample of MT-Bench messages (every 50th) with full ids.
// The digests of all MT-Bench messages are checked by golden_mtbench_test.cpp (slow).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "golden_support.hpp"
#include "tok/tokenizer.hpp"
#include "util/hash.hpp"
#include "util/line_reader.hpp"

namespace overhead::tok::golden {
namespace {

// The tokens around the first differing id, which usually tell at a glance what went wrong.
std::string tokens_at_difference(const Tokenizer& tok, const Ids& expected, const Ids& got) {
  std::size_t i = 0;
  while (i < expected.size() && i < got.size() && expected[i] == got[i]) ++i;
  auto show = [&](const Ids& ids) {
    std::string s;
    for (std::size_t k = i; k < ids.size() && k < i + 4; ++k) {
      s += (k > i ? " " : "") + excerpt(tok.id_to_token(ids[k]).value_or("<unknown id>"), 40);
    }
    return s.empty() ? std::string("(end)") : s;
  };
  return "\n    expected tokens from there: " + show(expected) + "\n    got tokens from there:      " + show(got);
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, CorpusIdsAndDecode) {
  const std::string& name = GetParam();
  const auto tok = Tokenizer::load(name);
  const std::vector<std::string> texts = load_corpus();
  const std::string path = golden_path(name, "corpus.jsonl.gz");
  util::LineReader reader(path);
  std::string line;
  std::size_t lines = 0;
  int mismatches = 0;
  auto report = [&](std::size_t n, const std::string& what, const std::string& detail) {
    if (++mismatches <= kMaxReported) {
      ADD_FAILURE() << name << ": corpus line " << n << " " << excerpt(texts[n - 1]) << ": " << what << ": " << detail;
    }
  };
  while (reader.next(line)) {
    const auto g = nlohmann::json::parse(line);
    const std::size_t n = g.at("line").get<std::size_t>();
    ASSERT_EQ(n, ++lines) << path << ": lines out of order";
    ASSERT_LE(n, texts.size()) << path << " has more lines than " << corpus_path();
    const std::string& text = texts[n - 1];
    // A corpus edit without regenerating the goldens would otherwise show as tokenizer bugs.
    ASSERT_EQ(g.at("text_digest").get<std::string>(), util::text_digest(text))
        << path << ": line " << n << " is stale; run scripts/make_tok_goldens.sh";

    const Ids want = g.at("ids").get<Ids>();
    const Ids want_plain = g.at("ids_no_special").get<Ids>();
    const Ids got = tok->encode(text, true);
    const Ids got_plain = tok->encode(text, false);
    if (got != want) report(n, "encode(add_special=true)", describe_ids_difference(want, got) + tokens_at_difference(*tok, want, got));
    if (got_plain != want_plain) {
      report(n, "encode(add_special=false)",
             describe_ids_difference(want_plain, got_plain) + tokens_at_difference(*tok, want_plain, got_plain));
    }
    if (tok->count(text, true) != want.size()) {
      report(n, "count(add_special=true)", "expected " + std::to_string(want.size()) + ", got " + std::to_string(tok->count(text, true)));
    }
    const std::string decoded = tok->decode(want, false);
    const std::string decoded_skip = tok->decode(want, true);
    if (decoded != g.at("decoded").get<std::string>()) {
      report(n, "decode(skip_special=false)", "expected " + excerpt(g.at("decoded").get<std::string>()) + " got " + excerpt(decoded));
    }
    if (decoded_skip != g.at("decoded_skip_special").get<std::string>()) {
      report(n, "decode(skip_special=true)",
             "expected " + excerpt(g.at("decoded_skip_special").get<std::string>()) + " got " + excerpt(decoded_skip));
    }
  }
  EXPECT_EQ(lines, texts.size()) << path << " does not cover every corpus line; run scripts/make_tok_goldens.sh";
  EXPECT_EQ(mismatches, 0) << name << ": " << mismatches << " mismatching checks over " << lines << " corpus lines";
}

TEST_P(GoldenTest, MtBenchSampleFullIds) {
  const std::string& name = GetParam();
  const auto tok = Tokenizer::load(name);
  const auto& messages = mtbench_messages();
  const std::string path = golden_path(name, "mtbench-sample.jsonl.gz");
  util::LineReader reader(path);
  std::string line;
  std::size_t lines = 0;
  int mismatches = 0;
  while (reader.next(line)) {
    ++lines;
    const auto g = nlohmann::json::parse(line);
    const auto index = g.at("index").get<std::size_t>();
    ASSERT_LT(index, messages.size()) << path << ": line " << reader.line_number();
    const MtBenchMessage& m = messages[index];
    ASSERT_EQ(g.at("record").get<std::string>(), m.record) << path << ": line " << reader.line_number()
                                                            << " is stale; run scripts/make_tok_goldens.sh";
    const Ids want = g.at("ids").get<Ids>();
    const Ids got = tok->encode(m.text, true);
    if (got != want && ++mismatches <= kMaxReported) {
      ADD_FAILURE() << name << ": MT-Bench message " << index << " (record " << m.record << ", message " << m.message
                    << ") " << excerpt(m.text) << ": " << describe_ids_difference(want, got)
                    << tokens_at_difference(*tok, want, got);
    }
  }
  EXPECT_GT(lines, 100u) << path << " holds too few samples";
  EXPECT_EQ(mismatches, 0) << name << ": " << mismatches << " of " << lines << " sampled messages differ";
}

INSTANTIATE_TEST_SUITE_P(AllTokenizers, GoldenTest, ::testing::ValuesIn(golden_tokenizer_names()),
                         gtest_name_of);

}  // namespace
}  // namespace overhead::tok::golden
