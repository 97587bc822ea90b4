// gpt_oss (harmony): analysis is reasoning, final is content, commentary to=functions.NAME is a
// call. Case classes from vLLM's tests/tool_parsers/test_openai_tool_parser.py (reasoning then a
// call, the recipient before or after <|channel|>, several calls, <|constrain|>json) and the
// harmony reasoning cases in tests/reasoning; SGLang's gpt-oss detector in
// test/srt/test_function_call_parser.py (a call with no analysis, commentary preambles).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

std::vector<Case> gpt_oss_cases() {
  return {
      {"analysis then final",
       "<|channel|>analysis<|message|>User asks for 2+2.<|end|><|start|>assistant<|channel|>final<|message|>4.<|return|>",
       answer("4.", {}, "User asks for 2+2.")},
      {"analysis then a call",
       "<|channel|>analysis<|message|>Need the weather tool.<|end|><|start|>assistant<|channel|>commentary "
       "to=functions.get_weather <|constrain|>json<|message|>{\"location\": \"Tokyo\", \"unit\": \"c\"}<|call|>",
       answer("", {{"get_weather", R"({"location":"Tokyo","unit":"c"})"}}, "Need the weather tool.")},
      {"recipient before the channel",
       "<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{\"q\": \"harmony\"}<|call|>",
       answer("", {{"lookup", R"({"q":"harmony"})"}})},
      {"two calls",
       "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{}<|call|>"
       "<|start|>assistant<|channel|>commentary to=functions.b <|constrain|>json<|message|>{\"x\": 1}<|call|>",
       answer("", {{"a", "{}"}, {"b", R"({"x":1})"}})},
      {"commentary preamble then a call",
       "<|channel|>commentary<|message|>Checking the forecast.<|end|><|start|>assistant<|channel|>commentary "
       "to=functions.forecast <|constrain|>json<|message|>{\"days\": 2}<|call|>",
       answer("Checking the forecast.", {{"forecast", R"({"days":2})"}})},
      {"final only", "<|channel|>final<|message|>Hello there.<|return|>", answer("Hello there.")},
      {"no header at all", "Plain words.", answer("Plain words.")},
      {"unicode in arguments", "<|channel|>commentary to=functions.say <|constrain|>json<|message|>{\"t\": \"Grüße 🌍\"}<|call|>",
       answer("", {{"say", R"({"t":"Grüße 🌍"})"}})},
      {"built-in tool recipient is no function call",
       "<|channel|>analysis to=browser.search code<|message|>{\"query\": \"x\"}<|call|>", answer(R"({"query": "x"})")},
      {"cut inside the analysis", "<|channel|>analysis<|message|>thinking about it", answer("", {}, "thinking about it")},
      {"cut inside the arguments",
       "<|channel|>analysis<|message|>go<|end|><|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": ",
       answer("<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\": ", {}, "go"), false},
      {"cut inside a header", "<|channel|>analy", answer("<|channel|>analy")},
  };
}

TEST(GptOss, CasesAndEverySplit) { testing::check_cases(testing::options("gpt_oss"), gpt_oss_cases()); }

TEST(GptOss, ReasoningParserAloneChoosesTheFamily) {
  const ParsedAnswer a = parse_whole(testing::options("", "gpt_oss"),
                                     "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>b");
  EXPECT_EQ(a, answer("b", {}, "a"));
}

}  // namespace
}  // namespace overhead::agent
