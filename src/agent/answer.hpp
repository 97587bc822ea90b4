// The parts of a model's answer that OpenAI's chat API returns apart from its text: what the
// answer holds (ParsedAnswer: content, reasoning_content, tool_calls) and the streamed pieces of
// it (Delta, shaped as a chat.completion.chunk delta). One rule ties them: folding a stream's
// deltas with apply() gives exactly the answer that parsing the whole text gives, byte for byte
// (answer_parser.hpp says how the parser keeps that promise at every split of the text).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::agent {

// One tool call as OpenAI's message.tool_calls[i] carries it (type is always "function").
struct ToolCall {
  std::string id;         // call_id(prefix, index): the same whether streamed or parsed whole
  std::string name;       // function.name
  std::string arguments;  // function.arguments: a JSON object as compact text (no whitespace
                          // outside strings; the model's bytes otherwise, in the model's key order)
  bool operator==(const ToolCall&) const = default;
};

// The whole answer: message.content, message.reasoning_content, message.tool_calls.
struct ParsedAnswer {
  std::string content;
  std::string reasoning;
  std::vector<ToolCall> calls;
  bool operator==(const ParsedAnswer&) const = default;
};

// One piece of a streamed answer, as one entry of a chunk's delta:
//   content    -> delta.content = text
//   reasoning  -> delta.reasoning_content = text
//   tool_call  -> delta.tool_calls[0] = {index, id and function.name (on the call's first delta
//                 only; empty after), function.arguments = text (a fragment, possibly empty)}
struct Delta {
  enum class Kind : std::uint8_t { content, reasoning, tool_call };
  Kind kind = Kind::content;
  std::string text;
  std::size_t index = 0;  // tool_call: the call's position in the answer, from 0
  std::string id;         // tool_call: set on the call's first delta only
  std::string name;       // tool_call: set on the call's first delta only
  bool operator==(const Delta&) const = default;
};

// The id of the answer's call number `index`: prefix + index. The caller derives the prefix from
// the request (e.g. "call_" + request id + "_"), so ids are unique across requests and a whole
// parse and a stream of the same text name their calls alike.
std::string call_id(std::string_view prefix, std::size_t index);

// Folds one delta into an answer: text fragments are appended, a tool call's first delta opens
// calls[index] with its id and name, later ones append to its arguments.
void apply(ParsedAnswer& answer, const Delta& delta);
ParsedAnswer accumulate(std::span<const Delta> deltas);

}  // namespace overhead::agent
