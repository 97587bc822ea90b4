// phi4 (Phi-4-mini): <|tool_call|>[...]<|/tool_call|>, or functools[...]. Case classes from
// vLLM's tests/tool_parsers/test_phi4mini_tool_parser.py (one call, parallel calls over several
// lines, data types, empty arguments, surrounding text, escaped strings, malformed input: an
// empty list, a list that is no JSON, a missing bracket).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

std::vector<Case> phi4_cases() {
  return {
      {"no call", "This is a plain answer.", answer("This is a plain answer.")},
      {"one call", R"(<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Seattle"}}]<|/tool_call|>)",
       answer("", {{"get_weather", R"({"city":"Seattle"})"}})},
      {"functools, two calls over lines",
       "functools[\n  {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Seattle\"}},\n  {\"name\": \"get_time\", "
       "\"arguments\": {\"tz\": \"America/Los_Angeles\"}}\n]",
       answer("", {{"get_weather", R"({"city":"Seattle"})"}, {"get_time", R"({"tz":"America/Los_Angeles"})"}})},
      {"a single object", R"(<|tool_call|>{"name": "ping", "arguments": {}}<|/tool_call|>)", answer("", {{"ping", "{}"}})},
      {"surrounding text",
       "Let me check.\nfunctools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}]\nAnything else?",
       answer("Let me check.\nAnything else?", {{"get_weather", R"({"city":"Tokyo"})"}})},
      {"escaped strings and emoji",
       R"(functools[{"name": "f", "arguments": {"q": "say \"hi\"", "p": "C:\\x", "e": "🎉"}}])",
       answer("", {{"f", R"({"q":"say \"hi\"","p":"C:\\x","e":"🎉"})"}})},
      {"empty list", "functools[] This is just text", answer("functools[] This is just text")},
      {"no JSON in the list", "functools[ This is just text ]", answer("functools[ This is just text ]")},
      {"missing bracket", R"(functools{"name": "f"})", answer(R"(functools{"name": "f"})")},
      {"the word alone", "I like functools and itertools.", answer("I like functools and itertools.")},
      {"cut inside the list", R"(<|tool_call|>[{"name": "f", "arguments": {"a": 1}})",
       answer("", {{"f", R"({"a":1})"}})},
  };
}

TEST(Phi4, CasesAndEverySplit) { testing::check_cases(testing::options("phi4"), phi4_cases()); }

}  // namespace
}  // namespace overhead::agent
