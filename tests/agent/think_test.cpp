// The think reasoning parser, alone and composed with a tool family. Case classes from vLLM's
// tests/reasoning (test_qwen3_reasoning_parser.py: <think> blocks, no block, a block cut short;
// test_deepseekr1_reasoning_parser.py: no opening tag, an empty block, multi-line reasoning) and
// SGLang's reasoning-parser tests (reasoning then a tool call in the same answer).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::answer;
using testing::Case;

std::vector<Case> qwen3_cases() {
  return {
      {"a block then the answer", "<think>\nAdd the numbers.\n</think>\n\n2 + 2 = 4.", answer("2 + 2 = 4.", {}, "Add the numbers.")},
      {"no block", "Just an answer.", answer("Just an answer.")},
      {"an empty block (thinking off)", "<think>\n\n</think>\n\nHi!", answer("Hi!")},
      {"multi-line reasoning", "<think>\nStep 1.\n\nStep 2.\n</think>Done.", answer("Done.", {}, "Step 1.\n\nStep 2.")},
      {"cut inside the block", "<think>\nStill going", answer("", {}, "Still going")},
      {"cut inside the closing tag", "<think>a</thi", answer("", {}, "a</thi")},
      {"a <think> later is text", "Answer: use <think> tags.", answer("Answer: use <think> tags.")},
      {"leading whitespace, then a block", "\n<think>x</think>y", answer("y", {}, "x")},
      {"reasoning then a call",
       "<think>\nI need the weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Hangzhou\"}}\n</tool_call>",
       answer("", {{"get_weather", R"({"city":"Hangzhou"})"}}, "I need the weather.")},
      {"tool markers inside the reasoning are reasoning",
       "<think>Maybe <tool_call>{\"name\": \"x\"}</tool_call>?</think>No call.",
       answer("No call.", {}, "Maybe <tool_call>{\"name\": \"x\"}</tool_call>?")},
  };
}

TEST(Think, Qwen3WithHermes) { testing::check_cases(testing::options("hermes", "think"), qwen3_cases()); }

TEST(Think, AloneWithoutToolFamily) {
  testing::check_cases(testing::options("", "think"),
                       {{"a block", "<think>why</think>because", answer("because", {}, "why")},
                        {"a call stays text", "<tool_call>{}</tool_call>", answer("<tool_call>{}</tool_call>")}});
}

TEST(Think, StartsInReasoning) {
  testing::check_cases(testing::options("", "think", true),
                       {{"no opening tag", "\nFirst, 2+2.\n</think>\n\nFour.", answer("Four.", {}, "First, 2+2.")},
                        {"an empty block", "</think>Four.", answer("Four.")},
                        {"no closing tag", "all of it", answer("", {}, "all of it")},
                        {"whitespace only", "  ", answer("")}});
}

}  // namespace
}  // namespace overhead::agent
