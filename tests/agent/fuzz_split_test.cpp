// The split property on generated text: random strings of every family's markers, parts of
// markers, JSON pieces, whitespace and multi-byte characters, for every family with and without
// the think stage, in both releases. Hand-written cases cover what peers' suites cover; these
// cover the orders of pieces no one thought to write. Also: when a streamed parse reports no bad
// call, it equals the whole_calls parse (the releases differ only on calls that fail).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

const std::vector<std::string> kPieces = {
    "<tool_call>", "</tool_call>", "<tool_ca", "<|python_tag|>", "[TOOL_CALLS]", "[ARGS]", "[TOOL_",
    "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>", "<\uFF5Ctool\u2581call\u2581begin\uFF5C>", "<\uFF5Ctool\u2581sep\uFF5C>",
    "<\uFF5Ctool\u2581call\u2581end\uFF5C>", "<\uFF5Ctool\u2581calls\u2581end\uFF5C>", "function", "```json\n", "```",
    "<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|call|>", "<|return|>", "analysis", "final",
    "commentary to=functions.f ", "<|constrain|>json", "<|tool_call|>", "<|/tool_call|>", "functools",
    "<think>", "</think>", "<thi", "{", "}", "[", "]", "\"name\": ", "\"arguments\": ", "\"parameters\": ", "\"f\"",
    "\"x y\"", ",", ";", ":", " ", "\n", "\n\n", "x", "get_weather", "\"", "\\\"", "1", "true", "é", "🌍", "東",
    "{\"name\": \"g\", \"arguments\": {\"a\": [1, \"b\"]}}", "{}",
};

// Whole calls of each family (and reasoning blocks), so that generated texts reach calls: a
// text mixes them, cuts of them and random pieces.
std::vector<std::string> snippets(const std::string& family) {
  const std::string cb = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
  const std::string b = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>function<\uFF5Ctool\u2581sep\uFF5C>";
  const std::string e = "<\uFF5Ctool\u2581call\u2581end\uFF5C>";
  const std::string ce = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";
  std::vector<std::string> all = {"<think>why \u00e9</think>\n", "Some text. "};
  const std::map<std::string, std::vector<std::string>> by_family = {
      {"llama3_json", {R"({"name": "f", "parameters": {"a": 1}})", R"(<|python_tag|>{"name": "g", "arguments": {}})", "; "}},
      {"hermes", {"<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"é\"}}\n</tool_call>", "<tool_call>{\"name\": \"g\"}</tool_call>"}},
      {"mistral", {R"([TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}, {"name": "g", "arguments": {}}])", R"([TOOL_CALLS]f[ARGS]{"a": [1]})",
                   R"([TOOL_CALLS]g[CALL_ID]x1[ARGS]{})"}},
      {"deepseek_v3", {cb + b + "f\n```json\n{\"a\": 1}\n```" + e, b + "g\n```json\n{}\n```" + e + ce, ce,
                       "<\uFF5Ctool\u2581call\u2581begin\uFF5C>h<\uFF5Ctool\u2581sep\uFF5C>{\"b\": [2]}" + e}},
      {"gpt_oss", {"<|channel|>analysis<|message|>think<|end|>",
                   "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": 1}<|call|>",
                   "<|channel|>final<|message|>done<|return|>"}},
      {"phi4", {R"(<|tool_call|>[{"name": "f", "arguments": {}}]<|/tool_call|>)", R"(functools[{"name": "g", "arguments": {"b": 2}}])"}},
  };
  if (const auto it = by_family.find(family); it != by_family.end()) all.insert(all.end(), it->second.begin(), it->second.end());
  return all;
}

std::string random_text(std::mt19937& rng, const std::vector<std::string>& whole) {
  std::string text;
  const std::size_t n = 1 + rng() % 6;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned pick = rng() % 10;
    if (pick < 4) {
      text += whole[rng() % whole.size()];
    } else if (pick < 6) {
      const std::string& w = whole[rng() % whole.size()];
      text += w.substr(0, rng() % w.size());  // may cut a character: invalid UTF-8 is allowed too
    } else {
      text += kPieces[rng() % kPieces.size()];
    }
  }
  return text;
}

// OVERHEAD_AGENT_FUZZ_ROUNDS and OVERHEAD_AGENT_FUZZ_SEED widen a local hunt; the test runs
// 150 texts per configuration from fixed seeds.
int rounds() {
  const char* v = std::getenv("OVERHEAD_AGENT_FUZZ_ROUNDS");
  return v != nullptr ? std::atoi(v) : 150;
}
std::uint32_t seed_offset() {
  const char* v = std::getenv("OVERHEAD_AGENT_FUZZ_SEED");
  return v != nullptr ? static_cast<std::uint32_t>(std::atoi(v)) : 0;
}

// Returns how many of the texts parsed to at least one call (the generator must reach calls).
std::size_t fuzz(const ParserOptions& base, std::uint32_t seed) {
  std::mt19937 rng(seed + seed_offset());
  std::size_t with_calls = 0;
  const std::vector<std::string> whole_snippets = snippets(base.tool_parser.empty() ? base.reasoning_parser : base.tool_parser);
  for (int i = 0; i < rounds(); ++i) {
    const std::string text = random_text(rng, whole_snippets);
    SCOPED_TRACE(text);
    ParserOptions whole = base;
    whole.release = CallRelease::whole_calls;
    ParserOptions streamed = base;
    streamed.release = CallRelease::streamed;
    testing::expect_split_invariant(whole, text, 40);
    testing::expect_split_invariant(streamed, text, 40);
    AnswerParser p(streamed);
    std::vector<Delta> out;
    p.push(text, out);
    p.finish(out);
    if (p.bad_calls().empty()) {
      EXPECT_EQ(accumulate(out), parse_whole(whole, text));
    }
    if (!parse_whole(whole, text).calls.empty()) ++with_calls;
    if (::testing::Test::HasFatalFailure()) break;
  }
  return with_calls;
}

class FuzzSplit : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzSplit, RandomTextsKeepTheProperty) {
  const std::size_t with_calls = fuzz(testing::options(GetParam()), 1234);
  std::printf("%s: %zu of %d random texts hold a call\n", GetParam().c_str(), with_calls, rounds());
  fuzz(testing::options(GetParam(), GetParam() == "gpt_oss" ? "gpt_oss" : "think"), 99);
  if (GetParam() != "gpt_oss") {
    fuzz(testing::options(GetParam(), "think", true), 7);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, FuzzSplit,
                         ::testing::Values("llama3_json", "hermes", "mistral", "deepseek_v3", "gpt_oss", "phi4", ""),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param.empty() ? std::string("none") : param_info.param;
                         });

}  // namespace
}  // namespace overhead::agent
