// Micro-benchmarks of the tokenizer on real text: every MT-Bench message content (8 MB, mostly
// Japanese with code and English), encoded one text at a time on one thread, for each of the seed
// tokenizers. One iteration = all texts; bytes/s and items/s are reported by Google Benchmark,
// tokens/s as a counter. bench/tokenize_vs_hf.sh gives the side-by-side with HF tokenizers.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>
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
      for (const auto& m : nlohmann::json::parse(line).at("prompt")) out.push_back(m.at("content").get<std::string>());
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
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
