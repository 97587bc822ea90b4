// Which parser a chat answer goes through (agent/answer_parser.hpp), per request: the model's
// tool-call and reasoning families detected from its chat template, or the ones `overhead serve
// --tool-parser` and `--reasoning-parser` name; the request's tools and tool_choice say whether
// calls are read at all. The non-streamed answer is parsed whole here; a stream is parsed piece
// by piece by CompletionStream with the same options, so the two agree byte for byte.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "agent/answer.hpp"
#include "agent/answer_parser.hpp"
#include "agent/detect.hpp"
#include "binding/chat_binding.hpp"
#include "serve/chat_request.hpp"

namespace overhead::serve {

// The flags' values: unset follows the template; "none" (kept as an empty name) parses nothing of
// that kind.
struct ParserOverrides {
  std::optional<std::string> tool_parser;
  std::optional<std::string> reasoning_parser;
};

// Throws std::invalid_argument unless `name` is a registered tool parser (reasoning parser when
// `reasoning`) or "none"; the message lists the names. Also refuses a pair the parser refuses
// (the gpt_oss reasoning parser with another tool family) when both are given.
void check_parser_overrides(const ParserOverrides& overrides);
[[nodiscard]] std::string parser_names(bool reasoning);  // "none, think, gpt_oss"

// How one answer is read.
struct AnswerShape {
  agent::ParserOptions options;
  bool first_call_only = false;  // parallel_tool_calls false
  // A constrained answer (answer_constraint.hpp) is one JSON document, read whole by the
  // constraint instead of the parsers: validated (response_format) or turned into calls
  // (tool_choice required / named).
  std::shared_ptr<const AnswerConstraint> constraint;
};

// The shape of one request's answer, or null when nothing would be parsed (no tool calls wanted
// and no reasoning parser): the text is then all content, as before.
class AnswerShapes {
 public:
  explicit AnswerShapes(ParserOverrides overrides) : overrides_(std::move(overrides)) {}

  // `binding`: the model's (its template detects the families; null when it could not be loaded,
  // then only the overrides apply). Throws RequestError (500) when the overrides and the detected
  // families make a pair the parser refuses.
  [[nodiscard]] std::shared_ptr<const AnswerShape> shape(const binding::ChatBinding* binding, const ChatRequest& request,
                                                         const std::string& id);

 private:
  agent::DetectedParsers detected(const binding::ChatBinding& binding);

  ParserOverrides overrides_;
  std::mutex mutex_;
  std::unordered_map<std::string, agent::DetectedParsers> detected_;  // by binding name
};

// The whole answer of `text` (all content without a shape), its calls cut to the first one when
// the shape says so.
[[nodiscard]] agent::ParsedAnswer parse_answer(const AnswerShape* shape, std::string text);

// The finish_reason of an answer: "tool_calls" when the engine stopped of itself after calls,
// else the engine's.
[[nodiscard]] std::string answer_finish_reason(const std::string& engine_reason, std::size_t calls);

}  // namespace overhead::serve
