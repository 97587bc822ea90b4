// The answer parser's CPU per generated token (src/agent/answer_parser.hpp), per tool-call family:
// a realistic answer of each family (text or reasoning, then two calls with a few hundred bytes
// of arguments) is cut into the pieces an engine streams and pushed one piece at a time through a
// fresh AnswerParser, then finished; one iteration = one answer. The counter per_token is the
// cost per piece in seconds ("120n" = 120 ns; goal: at most 0.5 µs).
//
// Two ways to cut the answer into tokens:
//   llama3_tok  the Llama-3.3 tokenizer's ids streamed back through its incremental detokenizer
//               (what the gateway receives). The families' markers that are not in Llama-3's
//               vocabulary (<tool_call>, [TOOL_CALLS], the DeepSeek and harmony tokens) are
//               several tokens here but one in their own models, so those answers count a few
//               more tokens than their models would make.
//   4_bytes     a fixed proxy: pieces of 4 bytes, moved to a UTF-8 character boundary.
// Both releases: whole_calls (the default) and streamed.
//
//   build/bench/agent_parse_bench [--benchmark_filter=hermes]
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "agent/answer_parser.hpp"
#include "tok/incremental_detokenizer.hpp"
#include "tok/tokenizer.hpp"
#include "util/utf8.hpp"

namespace {

using overhead::agent::AnswerParser;
using overhead::agent::CallRelease;
using overhead::agent::Delta;
using overhead::agent::ParserOptions;

const std::string kProse =
    "I checked the forecast sources for both cities. Lisbon should stay dry and mild through the weekend, with "
    "a light northerly wind in the afternoons; Porto is cooler and may see showers on Saturday morning, clearing "
    "by the evening. If you are choosing between them for an outdoor plan, Lisbon is the safer bet. ";
const std::string kArgs1 =
    R"({"city": "Lisbon", "country": "PT", "days": 3, "units": "metric", "fields": ["temperature", "precipitation", "wind_speed", "uv_index"], "language": "en"})";
const std::string kArgs2 =
    R"({"origin": "Lisbon", "destination": "Porto", "date": "2026-12-12", "passengers": {"adults": 2, "children": 1}, "class": "economy", "note": "window seats, près de la fenêtre"})";

struct Family {
  std::string name;
  ParserOptions options;
  std::string answer;
};

std::vector<Family> families() {
  const std::string cb = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
  const std::string b = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>function<\uFF5Ctool\u2581sep\uFF5C>";
  const std::string e = "\n```<\uFF5Ctool\u2581call\u2581end\uFF5C>";
  const std::string ce = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";
  auto opts = [](std::string tool, std::string reasoning = {}) {
    ParserOptions o;
    o.tool_parser = std::move(tool);
    o.reasoning_parser = std::move(reasoning);
    o.call_id_prefix = "call_0123456789abcdef_";
    return o;
  };
  return {
      {"llama3_json", opts("llama3_json"),
       "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": " + kArgs1 + "}; {\"name\": \"book_train\", \"parameters\": " +
           kArgs2 + "}"},
      {"hermes", opts("hermes"),
       kProse + "\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs1 +
           "}\n</tool_call>\n<tool_call>\n{\"name\": \"book_train\", \"arguments\": " + kArgs2 + "}\n</tool_call>"},
      {"hermes+think", opts("hermes", "think"),
       "<think>\n" + kProse + kProse + "\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs1 +
           "}\n</tool_call>"},
      {"mistral", opts("mistral"),
       kProse + "[TOOL_CALLS]get_weather[ARGS]" + kArgs1 + "[TOOL_CALLS]book_train[ARGS]" + kArgs2},
      {"deepseek_v3", opts("deepseek_v3"),
       kProse + cb + b + "get_weather\n```json\n" + kArgs1 + e + b + "book_train\n```json\n" + kArgs2 + e + ce},
      {"gpt_oss", opts("gpt_oss"),
       "<|channel|>analysis<|message|>" + kProse + "<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
       "<|constrain|>json<|message|>" + kArgs1 + "<|call|>"},
      {"phi4", opts("phi4"),
       kProse + "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": " + kArgs1 +
           "}, {\"name\": \"book_train\", \"arguments\": " + kArgs2 + "}]<|/tool_call|>"},
      {"none (content only)", opts(""), kProse + kProse + kProse},
  };
}

std::vector<std::string> four_byte_pieces(const std::string& text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = std::min(text.size(), i + 4);
    while (j < text.size() && overhead::util::utf8::is_continuation(static_cast<unsigned char>(text[j]))) ++j;
    out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string> tokenizer_pieces(const overhead::tok::Tokenizer& tok, const std::string& text) {
  std::vector<std::string> out;
  overhead::tok::IncrementalDetokenizer stream(tok);
  for (const auto id : tok.encode(text, false)) out.push_back(stream.push(id));
  out.push_back(stream.finish());
  return out;
}

void parse(benchmark::State& state, const ParserOptions& options, const std::vector<std::string>& pieces) {
  std::vector<Delta> out;
  std::size_t deltas = 0;
  for (auto _ : state) {
    AnswerParser parser(options);
    for (const std::string& piece : pieces) {
      out.clear();  // the gateway sends each push's deltas on
      parser.push(piece, out);
      deltas += out.size();
    }
    out.clear();
    parser.finish(out);
    deltas += out.size();
    benchmark::DoNotOptimize(deltas);
  }
  const double tokens = static_cast<double>(pieces.size());
  state.counters["tokens"] = tokens;
  state.counters["per_token"] =
      benchmark::Counter(tokens * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::shared_ptr<const overhead::tok::Tokenizer> tok;
  try {
    tok = overhead::tok::Tokenizer::load("llama-3.3-70b-instruct");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "no Llama-3.3 tokenizer (%s): 4-byte pieces only\n", e.what());
  }
  static std::vector<std::vector<std::string>> keep;  // pieces outlive the registrations
  keep.reserve(64);
  for (const Family& f : families()) {
    for (const CallRelease release : {CallRelease::whole_calls, CallRelease::streamed}) {
      ParserOptions o = f.options;
      o.release = release;
      const std::string suffix = release == CallRelease::whole_calls ? "/whole_calls" : "/streamed";
      if (tok) {
        keep.push_back(tokenizer_pieces(*tok, f.answer));
        benchmark::RegisterBenchmark(("llama3_tok/" + f.name + suffix).c_str(), parse, o, keep.back());
      }
      keep.push_back(four_byte_pieces(f.answer));
      benchmark::RegisterBenchmark(("4_bytes/" + f.name + suffix).c_str(), parse, o, keep.back());
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
