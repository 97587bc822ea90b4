// The workload of `overhead cost --workload FILE.jsonl[.gz]`: per record of the seed's JSONL, the
// input tokens as the seed counted them (the prompt rendered through the tokenizer's chat template,
// then encoded: pipe::ChatTokenProcessor) and the output tokens of its `answer` encoded by the
// same tokenizer without special tokens. A record the template refuses or without an answer is
// counted and left out, never guessed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cost/cost_model.hpp"

namespace overhead::cli {

struct RecordsWorkload {
  cost::Workload workload;
  std::size_t left_out = 0;  // bad lines, refused prompts, missing answers
};

// Throws cost::CostError when the file cannot be read or no record is usable.
RecordsWorkload workload_from_records(const std::string& path, const std::string& tokenizer);

// True when --workload names a file rather than in=N,out=M.
bool is_records_workload(const std::string& workload);

// A file of token-count pairs, one JSON object a line with numbers "input_tokens" and
// "output_tokens" (or "in" and "out"): a benchmark's lengths as it stated them. Empty when the
// file's first line is not such a pair (then it is read as the seed's records); throws
// cost::CostError naming the line of a later malformed pair.
std::optional<cost::Workload> workload_from_pairs(const std::string& path);

// How a named length distribution is drawn: from `dir` (data/workloads), `n` requests, by `seed`.
struct NamedDraws {
  std::filesystem::path dir;
  std::size_t n = 10000;
  std::uint64_t seed = 1;
};

// --workload as `cost` and `simulate` take it: in=N,out=M, a named length distribution (NAME, or
// NAME,in=N,out=M for its law at other means: cost/length_distribution.hpp), a file of token-count
// pairs, or the seed's records counted with `tokenizer`; `origin` says which and how many.
cost::Workload load_workload(const std::string& text, const std::string& tokenizer, std::string& origin,
                             const NamedDraws& named);

}  // namespace overhead::cli
