// The body of POST /v1/chat/completions, checked against OpenAI's schema before anything is
// queued: each failure is a RequestError whose param names the field (e.g. "messages[1].content").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ports/decoder.hpp"
#include "serve/answer_constraint.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {

enum class ToolChoice { none, automatic, required, named };

struct ChatRequest {
  std::string model;
  nlohmann::ordered_json messages;  // as sent, once checked
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
  std::optional<std::int64_t> max_tokens;  // max_completion_tokens, or the older max_tokens
  // temperature, top_p, presence_penalty, frequency_penalty, seed, stop, user: passed through to
  // the engine (ports::DecodeRequest::sampling); null when the body set none of them.
  std::shared_ptr<const ports::SamplingParams> sampling;
  // The tool definitions as sent (null when none): the chat template renders them into the
  // prompt, so they count in prompt_tokens.
  nlohmann::ordered_json tools;
  // tool_choice: whether the answer's tool calls are parsed (auto), the text is all content
  // (none), or the engine is constrained to call (required, named: see `constraint`). The default
  // is auto, and none when no tools are given.
  ToolChoice tool_choice = ToolChoice::automatic;
  std::string tool_choice_name;  // ToolChoice::named: the function, one of `tools`
  bool parallel_tool_calls = true;  // false: only the answer's first call is returned
  // The structured-output constraint (answer_constraint.hpp): response_format json_object /
  // json_schema, or tool_choice required / named; null when the answer is free text.
  std::shared_ptr<const AnswerConstraint> constraint;
  // chat_template_kwargs as sent (an object of further template variables; empty when none),
  // passed through the work item to the worker's render.
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
  // A /v1/completions request (parse_completion_request): the prompt text the engine continues,
  // through no chat template; `messages` is then an empty list, and no tools, constraint or
  // template variables are set. Its answer is a `text_completion`.
  std::optional<std::string> prompt_text;
};

// The body's `tools`, checked (null when absent); throws RequestError naming the field at fault.
// Shared with /v1/tokenize and /v1/render, which render the same prompt.
[[nodiscard]] nlohmann::ordered_json checked_tools(const nlohmann::ordered_json& body);

// Throws RequestError (400) naming the field at fault.
[[nodiscard]] ChatRequest parse_chat_request(const nlohmann::ordered_json& body, std::size_t max_messages);

// The body of POST /v1/completions (OpenAI's legacy completions, which vLLM and SGLang serve): one
// `prompt` text (or a list of one), `max_tokens` (16 when absent, as OpenAI's default), the same
// sampling fields and stream options as a chat request. What would change what an answer is made
// of is refused by name: several prompts, token-id prompts, `n` or `best_of` over 1, `echo`,
// `logprobs`, `suffix`, `logit_bias`.
[[nodiscard]] ChatRequest parse_completion_request(const nlohmann::ordered_json& body);

}  // namespace overhead::serve
