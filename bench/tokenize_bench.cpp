// Micro-benchmarks of the tokenizer on real text: every MT-Bench message content (8 MB, mostly
// Japanese with code and English), encoded one text at a time on one thread, for each of the seed
// tokenizers. One iteration = all texts; bytes/s and items/s are reported by Google Benchmark,
// tokens/s as a counter. bench/tokenize_vs_hf.sh gives the side-by-side with HF tokenizers.
// Besides: the same texts through encode_batch on 1 and 2 threads (the scaling), one text of
// 10 B to 100 KB cut from the corpus (the size sweep), and the worst cases for a BPE tokenizer
// (100 KB without a pre-token boundary, of one letter, of CJK, of digits, of spaces, of invalid
// UTF-8), which meet the long-piece path rather than the chunk memo.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tok/resolve.hpp"
#include "tok/tokenizer.hpp"
#include "util/line_reader.hpp"

namespace {

using overhead::tok::Ids;
using overhead::tok::Tokenizer;

const std::vector<std::string>& mtbench_texts() {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    overhead::util::LineReader reader(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz");
    std::string line;
    while (reader.next(line)) {
      if (line.empty()) continue;
      // Named: a range-for over parse(line).at(...) would walk a temporary destroyed before the loop
      // body (C++20 extends only the outermost temporary's life), which read nothing here.
      const auto record = nlohmann::json::parse(line);
      for (const auto& m : record.at("prompt")) out.push_back(m.at("content").get<std::string>());
    }
    return out;
  }();
  return texts;
}

std::int64_t total_bytes(const std::vector<std::string>& texts) {
  std::int64_t n = 0;
  for (const auto& t : texts) n += static_cast<std::int64_t>(t.size());
  return n;
}

// encode_into with a reused buffer: the per-text cost a serving loop pays.
void encode_all(benchmark::State& state, const std::shared_ptr<const Tokenizer>& tok) {
  const auto& texts = mtbench_texts();
  Ids ids;
  std::int64_t tokens = 0;
  for (auto _ : state) {
    tokens = 0;
    for (const auto& t : texts) {
      ids.clear();
      tok->encode_into(t, ids, true);
      tokens += static_cast<std::int64_t>(ids.size());
    }
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(texts));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(texts.size()));
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens) * static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}

// count(): what the statistics need, no id vector at all.
void count_all(benchmark::State& state, const std::shared_ptr<const Tokenizer>& tok) {
  const auto& texts = mtbench_texts();
  for (auto _ : state) {
    std::size_t n = 0;
    for (const auto& t : texts) n += tok->count(t, true);
    benchmark::DoNotOptimize(n);
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(texts));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(texts.size()));
}

// encode_batch over all texts on `threads` threads: the scaling a multi-core worker gets.
void encode_batch_all(benchmark::State& state, const std::shared_ptr<const Tokenizer>& tok, unsigned threads) {
  const auto& texts = mtbench_texts();
  for (auto _ : state) {
    auto ids = tok->encode_batch(texts, true, threads);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(texts));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(texts.size()));
}

// The first `bytes` of the corpus joined by newlines, cut back to a whole UTF-8 character.
std::string corpus_prefix(std::size_t bytes) {
  std::string all;
  for (const auto& t : mtbench_texts()) {
    all += t;
    all += '\n';
    if (all.size() >= bytes + 4) break;
  }
  std::size_t end = std::min(bytes, all.size());
  while (end > 0 && (static_cast<unsigned char>(all[end]) & 0xC0) == 0x80) --end;
  return all.substr(0, end);
}

// One text per iteration: the fixed cost per call shows at the small end, the long-piece cost at the big one.
void encode_one(benchmark::State& state, const std::shared_ptr<const Tokenizer>& tok, std::string text) {
  Ids ids;
  for (auto _ : state) {
    ids.clear();
    tok->encode_into(text, ids, true);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.counters["tokens"] = static_cast<double>(ids.size());
}

std::string repeated(std::string_view unit, std::size_t bytes) {
  std::string s;
  while (s.size() + unit.size() <= bytes) s += unit;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (const auto& name : overhead::tok::seed_tokenizer_names()) {
    std::shared_ptr<const Tokenizer> tok;
    try {
      tok = Tokenizer::load(name);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tokenize_bench: cannot load %s: %s\n", name.c_str(), e.what());
      return 1;
    }
    benchmark::RegisterBenchmark(("encode_mtbench/" + name).c_str(), encode_all, tok)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("count_mtbench/" + name).c_str(), count_all, tok)->Unit(benchmark::kMillisecond);
    for (const unsigned threads : {1u, 2u})
      benchmark::RegisterBenchmark(("encode_batch_mtbench/" + name + "/threads:" + std::to_string(threads)).c_str(),
                                   encode_batch_all, tok, threads)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    for (const std::size_t bytes : {10u, 100u, 1000u, 10'000u, 100'000u})
      benchmark::RegisterBenchmark(("encode_size/" + name + "/" + std::to_string(bytes)).c_str(), encode_one, tok,
                                   corpus_prefix(bytes));
    const std::pair<const char*, std::string> worst[] = {
        {"one_letter", repeated("a", 100'000)},
        {"cjk_no_space", repeated("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 100'000)},  // 日本語
        {"digits", repeated("1234567890", 100'000)},
        {"spaces", repeated(" ", 100'000)},
        {"invalid_utf8", repeated("\xFF\xFE\x80", 100'000)},
    };
    for (const auto& [what, text] : worst)
      benchmark::RegisterBenchmark(("encode_worst/" + name + "/" + what).c_str(), encode_one, tok, text)
          ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
