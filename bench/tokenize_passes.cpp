// A plain driver for instruction counts: encodes the texts of a JSONL file with one tokenizer,
// `--warm` untimed passes then `--passes` passes, one text at a time on one thread, and prints
// bytes and tokens per pass. Meant to run under `valgrind --tool=callgrind
// --toggle-collect=measured_passes` (only the measured passes are counted), where Google
// Benchmark's adaptive iteration counts would make the totals hard to divide by bytes.
//
//   tokenize_passes TOKENIZER FILE.jsonl [--field text] [--warm 1] [--passes 1] [--every N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tok/tokenizer.hpp"
#include "util/line_reader.hpp"

namespace {

using overhead::tok::Ids;
using overhead::tok::Tokenizer;

[[gnu::always_inline]] inline std::size_t encode_passes(const Tokenizer& tok, const std::vector<std::string>& texts, int passes) {
  Ids ids;
  std::size_t tokens = 0;
  for (int p = 0; p < passes; ++p) {
    for (const auto& t : texts) {
      ids.clear();
      tok.encode_into(t, ids, true);
      tokens += ids.size();
    }
  }
  return tokens;
}

// Not inlined nor folded with its twin, so callgrind can toggle collection on its name; the warm-up passes run in a
// function of another name, so they are not counted.
[[gnu::noipa]] std::size_t measured_passes(const Tokenizer& tok, const std::vector<std::string>& texts, int passes) {
  return encode_passes(tok, texts, passes);
}

[[gnu::noipa]] std::size_t warm_up(const Tokenizer& tok, const std::vector<std::string>& texts, int passes) {
  return encode_passes(tok, texts, passes);
}

int usage() {
  std::fprintf(stderr, "usage: tokenize_passes TOKENIZER FILE.jsonl [--field F] [--warm N] [--passes N] [--every N]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string name = argv[1], file = argv[2];
  std::string field = "text";
  int warm = 1, passes = 1;
  long every = 1;
  for (int k = 3; k + 1 < argc; k += 2) {
    const std::string opt = argv[k];
    if (opt == "--field") field = argv[k + 1];
    else if (opt == "--warm") warm = std::atoi(argv[k + 1]);
    else if (opt == "--passes") passes = std::atoi(argv[k + 1]);
    else if (opt == "--every") every = std::atol(argv[k + 1]);
    else return usage();
  }
  if (passes < 1 || warm < 0 || every < 1 || (argc - 3) % 2 != 0) return usage();
  try {
    const auto tok = Tokenizer::load(name);
    std::vector<std::string> texts;
    overhead::util::LineReader reader(file);
    std::string line;
    std::size_t bytes = 0;
    for (long n = 0; reader.next(line);) {
      if (line.empty()) continue;
      if (n++ % every != 0) continue;
      texts.push_back(nlohmann::json::parse(line).at(field).get<std::string>());
      bytes += texts.back().size();
    }
    warm_up(*tok, texts, warm);  // warms the per-thread caches, as a long-running worker has them
    const std::size_t tokens = measured_passes(*tok, texts, passes);
    std::printf("{\"tokenizer\":\"%s\",\"texts\":%zu,\"bytes_per_pass\":%zu,\"passes\":%d,\"tokens_per_pass\":%zu}\n",
                name.c_str(), texts.size(), bytes, passes, tokens / static_cast<std::size_t>(passes));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tokenize_passes: %s\n", e.what());
    return 1;
  }
  return 0;
}
