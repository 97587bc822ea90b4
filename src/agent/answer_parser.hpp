// The one parser of a model's generated text into content, reasoning and tool calls, whole and
// streamed. The gateway makes one AnswerParser per answer, push()es each text delta the engine
// sends and finish()es at the end of the generation; the deltas it gets back are what it streams.
// A non-streamed answer is parse_whole(), which is defined as exactly that: one parser,
// push(whole text), finish(), deltas folded (answer.hpp). So a stream and a whole answer agree
// byte for byte whatever the engine's token boundaries: tests/agent checks it at every split.
//
// What push() returns is what is certain now. It holds back only:
//   - a tail that may still become a marker (`<tool_c` may become `<tool_call>`), and an
//     incomplete UTF-8 character (every delta's text is whole characters when the input is);
//   - whitespace next to a marker: whitespace touching a tool call (before its opening marker,
//     after its end) or inside the edges of a reasoning block is not part of content or reasoning,
//     so trailing whitespace waits until the next non-space byte says whether it is kept;
//   - a call that has started: its name and arguments are released when the call is complete
//     (CallRelease::whole_calls, the default), or as they arrive (CallRelease::streamed).
// A call is complete when its JSON arguments are balanced (and, where the family has one, its
// name line is over); the closing marker after it is then consumed when it comes. Arguments must
// be a JSON object: the model's text with the whitespace outside strings removed (compacting
// streams; re-serialising could only happen at the end).
//
// A call that does not complete (the generation stopped inside it, its JSON is malformed, it is
// no call at all such as `[TOOL_CALLS][]`, or its arguments are no object):
//   - whole_calls: nothing of it was sent, and its text, markers included, becomes content
//     where it stood. So half a call is never presented as a call.
//   - streamed: if its id and name were already sent, it stays in the answer and its index is in
//     bad_calls() after finish(); the gateway must then not present it as complete (finish_reason
//     "length" when the generation was cut, an error otherwise). Before its name was sent, as in
//     whole_calls.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "agent/answer.hpp"

namespace overhead::agent {

enum class CallRelease {
  whole_calls,  // a call's one delta (id, name, all its arguments) once the call is complete
  streamed,     // id and name as soon as both are known, then argument fragments as they arrive
};

struct ParserOptions {
  // The tool-call family (tool_parser_names(): llama3_json, hermes, mistral, deepseek_v3,
  // gpt_oss, phi4), or empty for none: the text outside reasoning is all content.
  std::string tool_parser;
  // The reasoning parser (reasoning_parser_names(): think, gpt_oss), or empty for none. `think`
  // reads a leading <think>...</think> block and hands the rest to the tool family; `gpt_oss`
  // is the harmony format's analysis channel, read by the gpt_oss family (chosen with it when
  // tool_parser is empty).
  std::string reasoning_parser;
  // think only: the prompt already opened the block (DeepSeek-R1's template ends with <think>;
  // see prompt_opens_reasoning), so the text is reasoning until </think>; a <think> at the very
  // start is then skipped. Without </think> the whole text is reasoning.
  bool starts_in_reasoning = false;
  // Call ids are call_id(call_id_prefix, index) (answer.hpp).
  std::string call_id_prefix = "call_";
  CallRelease release = CallRelease::whole_calls;
};

// Streaming parser of one answer. Not thread-safe; one per answer.
class AnswerParser {
 public:
  // Throws std::invalid_argument naming an unknown tool or reasoning parser.
  explicit AnswerParser(const ParserOptions& options);
  ~AnswerParser();
  AnswerParser(const AnswerParser&) = delete;
  AnswerParser& operator=(const AnswerParser&) = delete;

  // Feeds the next piece of generated text (any split, even inside a UTF-8 character) and
  // appends the deltas that are certain now to `out` (consecutive text of one kind coalesced).
  void push(std::string_view text, std::vector<Delta>& out);
  std::vector<Delta> push(std::string_view text);
  // The generation is over: flushes everything held back. push() must not follow.
  void finish(std::vector<Delta>& out);
  std::vector<Delta> finish();

  // Streamed release only, after finish(): the indices of calls sent whose arguments never
  // completed or are not a JSON object. Always empty with whole_calls.
  [[nodiscard]] const std::vector<std::size_t>& bad_calls() const;
  // Calls released so far (sent, or folded into the answer).
  [[nodiscard]] std::size_t call_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The non-streamed answer: one parser, push(text), finish(), its deltas folded.
ParsedAnswer parse_whole(const ParserOptions& options, std::string_view text);

// The registered names, in registry order.
std::span<const std::string_view> tool_parser_names();
std::span<const std::string_view> reasoning_parser_names();
bool is_tool_parser(std::string_view name);
bool is_reasoning_parser(std::string_view name);

// True when a rendered prompt ends inside an opened reasoning block (its last non-space text is
// `<think>`), as DeepSeek-R1's and some Qwen3 templates render the generation prompt: the parser
// then needs starts_in_reasoning. We render the prompt ourselves, so this is exact.
bool prompt_opens_reasoning(std::string_view rendered_prompt);

}  // namespace overhead::agent
