// deepseek_v3 (DeepSeek-V3 and R1): the fullwidth-bar tool tokens with a ```json fence per call.
// Case classes from vLLM's tests/tool_parsers/test_deepseekv3_tool_parser.py (one call, parallel
// calls, data types, empty arguments, text before, escaped strings, malformed input: an
// unbalanced object, a section without a call-begin token) and SGLang's
// test/srt/test_function_call_parser.py (DeepSeekV3 detector, streamed arguments).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

const std::string kCallsBegin = "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>";
const std::string kCallBegin = "<\uFF5Ctool\u2581call\u2581begin\uFF5C>";
const std::string kSep = "<\uFF5Ctool\u2581sep\uFF5C>";
const std::string kCallEnd = "<\uFF5Ctool\u2581call\u2581end\uFF5C>";
const std::string kCallsEnd = "<\uFF5Ctool\u2581calls\u2581end\uFF5C>";

std::string call(std::string_view name, std::string_view json) {
  return kCallBegin + "function" + kSep + std::string(name) + "\n```json\n" + std::string(json) + "\n```" + kCallEnd;
}

std::vector<Case> deepseek_cases() {
  const std::string weather = call("get_weather", R"({"city": "Tokyo", "unit": "celsius"})");
  const std::string hotels = call("search_hotels", R"({"location": "Kyoto", "nights": 2})");
  return {
      {"no call", "How can I help? I can check the weather.", answer("How can I help? I can check the weather.")},
      {"one call", kCallsBegin + weather + kCallsEnd, answer("", {{"get_weather", R"({"city":"Tokyo","unit":"celsius"})"}})},
      {"two calls", kCallsBegin + weather + hotels + kCallsEnd,
       answer("", {{"get_weather", R"({"city":"Tokyo","unit":"celsius"})"},
                   {"search_hotels", R"({"location":"Kyoto","nights":2})"}})},
      {"text before", "Let me check the weather for you." + kCallsBegin + weather + kCallsEnd,
       answer("Let me check the weather for you.", {{"get_weather", R"({"city":"Tokyo","unit":"celsius"})"}})},
      {"empty arguments, then a second call", kCallsBegin + call("now", "{}") + call("get_weather", R"({"city": "Nara"})") + kCallsEnd,
       answer("", {{"now", "{}"}, {"get_weather", R"({"city":"Nara"})"}})},
      {"data types", kCallsBegin + call("t", R"({"s": "x", "i": 7, "f": 0.25, "b": false, "n": null, "a": ["p", "q"], "o": {"k": []}})") + kCallsEnd,
       answer("", {{"t", R"({"s":"x","i":7,"f":0.25,"b":false,"n":null,"a":["p","q"],"o":{"k":[]}})"}})},
      {"escaped strings and unicode", kCallsBegin + call("send", R"({"text": "He said \"hello\"", "path": "C:\\dir", "jp": "今日は"})") + kCallsEnd,
       answer("", {{"send", R"({"text":"He said \"hello\"","path":"C:\\dir","jp":"今日は"})"}})},
      {"text after the section", kCallsBegin + weather + kCallsEnd + "\nChecking now.",
       answer("\nChecking now.", {{"get_weather", R"({"city":"Tokyo","unit":"celsius"})"}})},
      {"unbalanced object",
       kCallsBegin + kCallBegin + "function" + kSep + "get_weather\n```json\n{\"city\": \"Tokyo\"\n```" + kCallEnd + kCallsEnd,
       answer(kCallsBegin + kCallBegin + "function" + kSep + "get_weather\n```json\n{\"city\": \"Tokyo\"\n```" + kCallEnd + kCallsEnd),
       false},
      {"a section without a call-begin token",
       kCallsBegin + "function" + kSep + "get_weather\n```json\n{\"city\": \"Tokyo\"}\n```" + kCallsEnd,
       answer(kCallsBegin + "function" + kSep + "get_weather\n```json\n{\"city\": \"Tokyo\"}\n```" + kCallsEnd)},
      {"cut inside the arguments", kCallsBegin + kCallBegin + "function" + kSep + "f\n```json\n{\"a\": [1, 2",
       answer(kCallsBegin + kCallBegin + "function" + kSep + "f\n```json\n{\"a\": [1, 2"), false},
      {"V3.1 form, two calls",
       kCallsBegin + kCallBegin + "get_weather" + kSep + R"({"city": "Kobe"})" + kCallEnd + kCallBegin + "get_time" + kSep + "{}" +
           kCallEnd + kCallsEnd,
       answer("", {{"get_weather", R"({"city":"Kobe"})"}, {"get_time", "{}"}})},
      {"cut inside a token", "Ok<\uFF5Ctool\u2581ca", answer("Ok<\uFF5Ctool\u2581ca")},
  };
}

TEST(DeepSeekV3, CasesAndEverySplit) { testing::check_cases(testing::options("deepseek_v3"), deepseek_cases()); }

// DeepSeek-R1: its template opens <think> in the prompt, so the answer starts inside reasoning.
// From vLLM's tests/reasoning/test_deepseekr1_reasoning_parser.py (no opening tag, calls after
// reasoning).
TEST(DeepSeekV3, R1ReasoningThenCalls) {
  const std::vector<Case> cases = {
      {"reasoning, then a call",
       "The user wants Tokyo's weather.\n</think>\n\n" + kCallsBegin + call("get_weather", R"({"city": "Tokyo"})") + kCallsEnd,
       answer("", {{"get_weather", R"({"city":"Tokyo"})"}}, "The user wants Tokyo's weather.")},
      {"reasoning, then text", "Easy.</think>It is 4.", answer("It is 4.", {}, "Easy.")},
      {"an explicit <think> too", "<think>Hmm.</think>Four.", answer("Four.", {}, "Hmm.")},
      {"no end of reasoning", "Still thinking about", answer("", {}, "Still thinking about")},
  };
  testing::check_cases(testing::options("deepseek_v3", "think", true), cases);
}

}  // namespace
}  // namespace overhead::agent
