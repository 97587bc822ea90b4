// The delta fold (answer.hpp), call ids, the registry's names and the parser's refusals.
#include <gtest/gtest.h>

#include <stdexcept>

#include "agent/answer_parser.hpp"

namespace overhead::agent {
namespace {

TEST(Answer, FoldsDeltasInOrder) {
  const std::vector<Delta> deltas = {
      {Delta::Kind::reasoning, "think", 0, "", ""},
      {Delta::Kind::content, "Hi", 0, "", ""},
      {Delta::Kind::tool_call, "{\"a\"", 0, "c_0", "f"},
      {Delta::Kind::tool_call, ":1}", 0, "", ""},
      {Delta::Kind::tool_call, "{}", 1, "c_1", "g"},
  };
  const ParsedAnswer a = accumulate(deltas);
  EXPECT_EQ(a.content, "Hi");
  EXPECT_EQ(a.reasoning, "think");
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[0], (ToolCall{"c_0", "f", "{\"a\":1}"}));
  EXPECT_EQ(a.calls[1], (ToolCall{"c_1", "g", "{}"}));
}

TEST(Answer, CallIdsComeFromThePrefix) {
  EXPECT_EQ(call_id("call_req42_", 0), "call_req42_0");
  ParserOptions o;
  o.tool_parser = "hermes";
  o.call_id_prefix = "call_abc_";
  const ParsedAnswer a = parse_whole(o, "<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"
                                        "<tool_call>{\"name\":\"g\",\"arguments\":{}}</tool_call>");
  ASSERT_EQ(a.calls.size(), 2u);
  EXPECT_EQ(a.calls[0].id, "call_abc_0");
  EXPECT_EQ(a.calls[1].id, "call_abc_1");
}

TEST(Answer, RegistryNamesEveryFamily) {
  for (std::string_view name : {"llama3_json", "hermes", "mistral", "deepseek_v3", "gpt_oss", "phi4"}) {
    EXPECT_TRUE(is_tool_parser(name)) << name;
    ParserOptions o;
    o.tool_parser = std::string(name);
    EXPECT_NO_THROW(AnswerParser{o});
  }
  EXPECT_EQ(tool_parser_names().size(), 6u);
  EXPECT_TRUE(is_reasoning_parser("think"));
  EXPECT_TRUE(is_reasoning_parser("gpt_oss"));
}

TEST(Answer, UnknownNamesAreRefused) {
  ParserOptions o;
  o.tool_parser = "qwen9";
  EXPECT_THROW(AnswerParser{o}, std::invalid_argument);
  o.tool_parser = "";
  o.reasoning_parser = "ponder";
  EXPECT_THROW(AnswerParser{o}, std::invalid_argument);
  o.tool_parser = "hermes";
  o.reasoning_parser = "gpt_oss";
  EXPECT_THROW(AnswerParser{o}, std::invalid_argument);
}

TEST(Answer, NoFamilyIsAllContent) {
  ParserOptions o;
  EXPECT_EQ(parse_whole(o, "<tool_call>{\"name\":\"f\"}</tool_call>").content, "<tool_call>{\"name\":\"f\"}</tool_call>");
}

TEST(Answer, PromptOpensReasoning) {
  EXPECT_TRUE(prompt_opens_reasoning("<｜User｜>hi<｜Assistant｜><think>\n"));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n"));
}

}  // namespace
}  // namespace overhead::agent
