// mistral: [TOOL_CALLS] then a JSON array (older tokenizers), or name[ARGS]{json} per call (v11
// and later). Case classes from vLLM's tests/tool_parsers/test_mistral_tool_parser.py (both
// forms, several calls, unicode such as "ß" in arguments, arguments split across deltas) and
// SGLang's test/srt/test_function_call_parser.py (Mistral detector: text before the token,
// several calls in one array).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

std::vector<Case> mistral_cases() {
  return {
      {"no call", "Bonjour ! Que puis-je faire ?", answer("Bonjour ! Que puis-je faire ?")},
      {"array, one call", R"([TOOL_CALLS][{"name": "add", "arguments": {"a": 3, "b": 4}}])",
       answer("", {{"add", R"({"a":3,"b":4})"}})},
      {"array, two calls",
       R"([TOOL_CALLS] [{"name": "add", "arguments": {"a": 1, "b": 2}}, {"name": "mul", "arguments": {"a": 5, "b": 6}}])",
       answer("", {{"add", R"({"a":1,"b":2})"}, {"mul", R"({"a":5,"b":6})"}})},
      {"array with call ids", R"([TOOL_CALLS][{"name": "f", "arguments": {}, "id": "a1B2c3D4e"}])",
       answer("", {{"f", "{}"}})},
      {"text before", R"(I will add them. [TOOL_CALLS][{"name": "add", "arguments": {"a": 1, "b": 1}}])",
       answer("I will add them.", {{"add", R"({"a":1,"b":1})"}})},
      {"v11 form", R"([TOOL_CALLS]get_weather[ARGS]{"city": "Madrid", "unit": "celsius"})",
       answer("", {{"get_weather", R"({"city":"Madrid","unit":"celsius"})"}})},
      {"v11, two calls", R"([TOOL_CALLS]get_weather[ARGS]{"city": "Madrid"}[TOOL_CALLS]get_time[ARGS]{"tz": "CET"})",
       answer("", {{"get_weather", R"({"city":"Madrid"})"}, {"get_time", R"({"tz":"CET"})"}})},
      {"v11, empty arguments then a second call", R"([TOOL_CALLS]refresh[ARGS]{}[TOOL_CALLS]list_files[ARGS]{"dir": "/"})",
       answer("", {{"refresh", "{}"}, {"list_files", R"({"dir":"/"})"}})},
      {"v11, unicode", R"([TOOL_CALLS]translate[ARGS]{"text": "Straße ß — naïve"})",
       answer("", {{"translate", R"({"text":"Straße ß — naïve"})"}})},
      {"v11, nested arguments", "[TOOL_CALLS]plan[ARGS]{\"steps\": [{\"do\": \"a\", \"args\": {\"n\": 1}}, {\"do\": \"b\"}]}",
       answer("", {{"plan", R"({"steps":[{"do":"a","args":{"n":1}},{"do":"b"}]})"}})},
      {"a call id token", R"([TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Nice"}[TOOL_CALLS]ping[CALL_ID]Z9[ARGS]{})",
       answer("", {{"get_weather", R"({"city":"Nice"})"}, {"ping", "{}"}})},
      {"a bad call id", "[TOOL_CALLS]f[CALL_ID]no-dash[ARGS]{}", answer("[TOOL_CALLS]f[CALL_ID]no-dash[ARGS]{}")},
      {"v11, text after", "[TOOL_CALLS]ping[ARGS]{} Done.", answer(" Done.", {{"ping", "{}"}})},
      {"JSON text inside a string argument",
       R"([TOOL_CALLS][{"name": "make_next_step_decision", "arguments": {"decision": "", "content": "```json\n{\"a\": [1, {\"b\": \"]\"}]}\n```"}}])",
       answer("", {{"make_next_step_decision", R"({"decision":"","content":"```json\n{\"a\": [1, {\"b\": \"]\"}]}\n```"})"}})},
      {"empty array", "[TOOL_CALLS][]", answer("[TOOL_CALLS][]")},
      {"a name with a space", "[TOOL_CALLS]not a name[ARGS]{}", answer("[TOOL_CALLS]not a name[ARGS]{}")},
      {"cut inside the arguments", R"([TOOL_CALLS]f[ARGS]{"a": )", answer(R"([TOOL_CALLS]f[ARGS]{"a": )"), false},
      {"cut inside the array", R"([TOOL_CALLS][{"name": "f", "arguments": {"a": 1}}, {"name": "g")",
       answer(R"({"name": "g")", {{"f", R"({"a":1})"}})},
      {"cut inside the token", "Sure [TOOL_CA", answer("Sure [TOOL_CA")},
  };
}

TEST(Mistral, CasesAndEverySplit) { testing::check_cases(testing::options("mistral"), mistral_cases()); }

}  // namespace
}  // namespace overhead::agent
