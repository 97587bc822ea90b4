// Micro-benchmarks of text back from ids: every MT-Bench message content is encoded once (outside
// the timing), then its ids are streamed one by one through a fresh IncrementalDetokenizer (one per
// message, as a server makes one per stream) and finished; one iteration = all messages. The
// counter per_token is the cost per streamed id in seconds ("85n" = 85 ns; target: at most 300 ns). For scale, the same ids
// through Tokenizer::decode once per message (no streaming).
//
//   build/bench/detokenize_bench [--benchmark_filter=gemma]   (env OVERHEAD_DETOK_TOKENIZERS=a,b)
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "tok/incremental_detokenizer.hpp"
#include "tok/tokenizer.hpp"
#include "util/line_reader.hpp"

namespace {

using overhead::tok::DetokenizeOptions;
using overhead::tok::Ids;
using overhead::tok::IncrementalDetokenizer;
using overhead::tok::Tokenizer;

std::vector<std::string> mtbench_texts() {
  std::vector<std::string> out;
  overhead::util::LineReader reader(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz");
  std::string line;
  while (reader.next(line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const auto record = nlohmann::json::parse(line);
    for (const auto& m : record.at("prompt")) out.push_back(m.at("content").get<std::string>());
  }
  return out;
}

struct Corpus {
  std::shared_ptr<const Tokenizer> tok;
  std::vector<Ids> ids;  // one per message, add_special_tokens=true
  std::int64_t tokens = 0;
};

std::int64_t stream_all(const Corpus& c, bool skip, std::string& text) {
  std::int64_t bytes = 0;
  for (const Ids& ids : c.ids) {
    IncrementalDetokenizer stream(*c.tok, DetokenizeOptions{.skip_special_tokens = skip});
    text.clear();
    for (const auto id : ids) stream.push(id, text);
    stream.finish(text);
    bytes += static_cast<std::int64_t>(text.size());
  }
  return bytes;
}

void per_token_counters(benchmark::State& state, const Corpus& c) {
  state.SetItemsProcessed(state.iterations() * c.tokens);
  // Seconds per token, shown with an SI prefix ("85n" = 85 ns).
  state.counters["per_token"] = benchmark::Counter(static_cast<double>(c.tokens) * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void streamed(benchmark::State& state, const std::shared_ptr<Corpus>& c, bool skip) {
  std::string text;
  for (auto _ : state) benchmark::DoNotOptimize(stream_all(*c, skip, text));
  per_token_counters(state, *c);
}

void decoded_whole(benchmark::State& state, const std::shared_ptr<Corpus>& c) {
  for (auto _ : state) {
    std::int64_t bytes = 0;
    for (const Ids& ids : c->ids) bytes += static_cast<std::int64_t>(c->tok->decode(ids).size());
    benchmark::DoNotOptimize(bytes);
  }
  per_token_counters(state, *c);
}

std::vector<std::string> tokenizer_names() {
  std::vector<std::string> names;
  const char* env = std::getenv("OVERHEAD_DETOK_TOKENIZERS");
  std::stringstream list(env != nullptr ? env : "llama-3.3-70b-instruct,gemma-2-27b-it,phi-4");
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::vector<std::string> texts = mtbench_texts();
  for (const std::string& name : tokenizer_names()) {
    auto c = std::make_shared<Corpus>();
    c->tok = Tokenizer::load(name);
    for (const std::string& t : texts) {
      c->ids.push_back(c->tok->encode(t, true));
      c->tokens += static_cast<std::int64_t>(c->ids.back().size());
    }
    benchmark::RegisterBenchmark(("incremental/" + name).c_str(), streamed, c, false)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("incremental_skip_special/" + name).c_str(), streamed, c, true)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("decode_whole/" + name).c_str(), decoded_whole, c)->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
