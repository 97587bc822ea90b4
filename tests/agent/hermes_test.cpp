// hermes (Hermes 2 Pro, Qwen2.5, Qwen3): <tool_call>{json}</tool_call>. Case classes from
// vLLM's tests/tool_parsers/test_hermes_tool_parser.py and common_tests.py (no call, one call,
// parallel calls, data types, empty arguments, surrounding text, escaped strings, malformed
// input) and SGLang's test/srt/test_function_call_parser.py (Qwen25 detector); the streaming bugs
// from vLLM issues #10395 (arguments cut mid-JSON), #47901 (a call after an empty-argument call),
// #56263 (text after a call dropped by the whole parse only).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

std::vector<Case> hermes_cases() {
  return {
      {"no call", "The capital of France is Paris.", answer("The capital of France is Paris.")},
      {"one call",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\", \"unit\": \"celsius\"}}\n</tool_call>",
       answer("", {{"get_weather", R"({"city":"Lyon","unit":"celsius"})"}})},
      {"text before the call",
       "Let me look that up.\n\n<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"q\": \"tides\"}}\n</tool_call>",
       answer("Let me look that up.", {{"lookup", R"({"q":"tides"})"}})},
      {"two calls",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>\n"
       "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Oslo\"}}\n</tool_call>",
       answer("", {{"get_weather", R"({"city":"Oslo"})"}, {"get_time", R"({"tz":"Europe/Oslo"})"}})},
      {"a call after an empty-argument call",
       "<tool_call>{\"name\": \"now\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"get_weather\", "
       "\"arguments\": {\"city\": \"Bergen\"}}</tool_call>",
       answer("", {{"now", "{}"}, {"get_weather", R"({"city":"Bergen"})"}})},
      {"unicode in arguments",
       "<tool_call>\n{\"name\": \"translate\", \"arguments\": {\"text\": \"Zürich 東京 🌧\", \"to\": \"ja\"}}\n</tool_call>",
       answer("", {{"translate", R"({"text":"Zürich 東京 🌧","to":"ja"})"}})},
      {"escaped strings",
       R"(<tool_call>{"name": "write", "arguments": {"quote": "He said \"hi\"", "path": "C:\\tmp\\a.txt", "nl": "a\nb", "u": "\u00e9"}}</tool_call>)",
       answer("", {{"write", R"({"quote":"He said \"hi\"","path":"C:\\tmp\\a.txt","nl":"a\nb","u":"\u00e9"})"}})},
      {"data types, pretty-printed",
       "<tool_call>\n{\n  \"name\": \"types\",\n  \"arguments\": {\n    \"i\": 42,\n    \"f\": -3.5e2,\n    \"b\": true,\n"
       "    \"n\": null,\n    \"a\": [1, \"two\", [3]],\n    \"o\": {\"k\": {\"deep\": false}},\n    \"ea\": [],\n    \"eo\": {}\n  }\n}\n</tool_call>",
       answer("", {{"types", R"({"i":42,"f":-3.5e2,"b":true,"n":null,"a":[1,"two",[3]],"o":{"k":{"deep":false}},"ea":[],"eo":{}})"}})},
      {"text after the call",
       "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>\nI have pinged the host.",
       answer("\nI have pinged the host.", {{"ping", "{}"}})},
      {"closing tag missing", "<tool_call>\n{\"name\": \"ping\", \"arguments\": {\"host\": \"a\"}}",
       answer("", {{"ping", R"({"host":"a"})"}})},
      {"parameters instead of arguments, name last",
       "<tool_call>{\"parameters\": {\"x\": 1}, \"name\": \"inc\"}</tool_call>", answer("", {{"inc", R"({"x":1})"}})},
      {"no arguments key", "<tool_call>{\"name\": \"now\"}</tool_call>", answer("", {{"now", "{}"}})},
      {"generation cut inside the arguments", "Sure. <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1",
       answer("Sure. <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1"), false},
      {"cut inside the opening tag", "Sure. <tool_ca", answer("Sure. <tool_ca")},
      {"not JSON inside the tags", "<tool_call>not json</tool_call>", answer("<tool_call>not json</tool_call>")},
      {"arguments not an object", R"(<tool_call>{"name": "f", "arguments": "x"}</tool_call> ok)",
       answer(R"(<tool_call>{"name": "f", "arguments": "x"}</tool_call> ok)"), false},
      {"no name", R"(<tool_call>{"arguments": {}}</tool_call>)", answer(R"(<tool_call>{"arguments": {}}</tool_call>)")},
      {"a tag-like text that is no tag", "Use <tool> or <tool_calls> here.", answer("Use <tool> or <tool_calls> here.")},
      // SGLang's Mistral and Qwen25 detector cases: brackets, braces and markers inside argument strings.
      {"markers and brackets inside argument strings",
       R"(<tool_call>{"name": "note", "arguments": {"text": "a } ] </tool_call> <tool_call> {\"x\": [1]}"}}</tool_call>)",
       answer("", {{"note", R"({"text":"a } ] </tool_call> <tool_call> {\"x\": [1]}"})"}})},
      {"trailing whitespace of a plain answer kept", "Done.\n\n", answer("Done.\n\n")},
  };
}

TEST(Hermes, CasesAndEverySplit) { testing::check_cases(testing::options("hermes"), hermes_cases()); }

}  // namespace
}  // namespace overhead::agent
