// Choosing the parsers of a model from its chat template: the markers a template writes when it
// renders tools or reasoning say which family its model answers in. The gateway calls this once
// per model; --tool-parser and --reasoning-parser override it.
#pragma once

#include <string>
#include <string_view>

namespace overhead::agent {

struct DetectedParsers {
  std::string tool_parser;       // a tool_parser_names() entry, or empty: the template renders no tools
  std::string reasoning_parser;  // a reasoning_parser_names() entry, or empty
  bool operator==(const DetectedParsers&) const = default;
};

// From the template's source text (the Jinja text, not a rendering). The markers, first match
// wins for the tool parser:
//   gpt_oss      <|channel|> (harmony); reasoning gpt_oss as well
//   deepseek_v3  tool▁calls▁begin (DeepSeek's fullwidth-bar tokens)
//   mistral      [TOOL_CALLS]
//   hermes       <tool_call>
//   phi4         <|tool_call|> or <|tool|>
//   llama3_json  <|python_tag|>, or the ipython role together with "parameters" (Llama 3.2's JSON prompt)
// Reasoning `think` when the template mentions <think> or </think> (Qwen3, DeepSeek-R1, QwQ).
DetectedParsers detect_parsers(std::string_view chat_template);

}  // namespace overhead::agent
