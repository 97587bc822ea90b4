// Shared by the golden tests: which tokenizer names the goldens cover, where the files are, the
// MT-Bench message texts in golden order, and how a mismatch is shown (line, text excerpt, the
// first differing id with the ids around it), so a failure says exactly what to look at.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace overhead::tok::golden {

// The 7 short names and the 5 raw asset folders covered separately (scripts/make_tok_goldens.sh).
const std::vector<std::string>& golden_tokenizer_names();

// A tokenizer name as a gtest parameter name (only [A-Za-z0-9_] allowed there).
std::string gtest_name_of(const ::testing::TestParamInfo<std::string>& param);

// data/tok/golden/<name>.<suffix>
std::string golden_path(const std::string& name, const std::string& suffix);
std::string corpus_path();

// Corpus texts (field "text" of data/tok/corpus.jsonl), in order.
std::vector<std::string> load_corpus();

struct MtBenchMessage {
  std::string record;  // record id
  std::size_t message = 0;  // index in the record's prompt
  std::string text;
};
// Every message content of data/jmtbench/records.jsonl.gz, record by record, message by message
// (the order of the .mtbench goldens). Read once per process.
const std::vector<MtBenchMessage>& mtbench_messages();

// A text shortened to about `max_bytes` (cut on a UTF-8 boundary) with controls escaped, for
// failure messages.
std::string excerpt(std::string_view text, std::size_t max_bytes = 80);
// "expected N ids, got M; first difference at i: expected [..] got [..]" or "" when equal.
std::string describe_ids_difference(std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got);

// Printing more than a few mismatches per check only buries the first, most useful one.
inline constexpr int kMaxReported = 5;

}  // namespace overhead::tok::golden
