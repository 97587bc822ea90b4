// OpenAI's chat-completion shapes, built from a worker's reply (reply/reply.hpp): the
// `chat.completion` body, the `chat.completion.chunk` server-sent events of a stream (ending
// `data: [DONE]`; streamed as the text arrives by completion_stream.hpp), and the record as JSON
// for GET /v1/requests/{id}.
//
// The decoder stage: with `--decoder none` nothing decodes, so the answer is empty,
// `completion_tokens` is 0 and `finish_reason` is "length" (generation ended before a token, as a
// budget of zero tokens ends it); `system_fingerprint` says "overhead-decoder-none" so a client
// can tell. With `sim:` or `openai:` the worker's decoder ran: the content is the decoder's text
// (the simulated decoder has none: it stays empty, no text is made up), `finish_reason` the
// engine's, `completion_tokens` the record's output_tokens, and the fingerprint names the decoder
// ("overhead-decoder-openai"). The decoder is the answering worker's (Reply::decoder), which may
// run on another machine than the gateway: a gateway that only routes (no workers of its own) has
// no decoder to name, so before the reply names one (a stream's first chunks) the fingerprint is
// null, never a guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/answer.hpp"
#include "ports/record.hpp"
#include "reply/reply.hpp"
#include "serve/api_error.hpp"

namespace overhead::serve {

struct AnswerShape;  // answer_shape.hpp

inline constexpr const char* kDecoderNoneFingerprint = "overhead-decoder-none";

struct Completion {
  std::string id;
  std::int64_t created = 0;  // unix seconds
  std::string model;         // as the client named it
  std::int64_t prompt_tokens = 0;
  std::string content;
  std::string reasoning;               // message.reasoning_content (left out when empty)
  std::vector<agent::ToolCall> calls;  // message.tool_calls (left out when none; content is then null when empty)
  std::int64_t completion_tokens = 0;
  std::string finish_reason;
  std::string fingerprint = kDecoderNoneFingerprint;  // empty: unknown (JSON null)
  // A constrained answer that does not follow its constraint (answer_constraint.hpp): the error
  // the client gets instead of this completion.
  std::optional<ApiError> invalid_output;
  // The answer of /v1/completions: a `text_completion` ({"choices":[{"text",...}]}), streamed as
  // `text_completion` chunks without a role event; else a `chat.completion`.
  bool text_completion = false;
};

// The system_fingerprint field's value: the fingerprint, null when it is unknown.
[[nodiscard]] nlohmann::ordered_json fingerprint_json(const std::string& fingerprint);
// The usage object: prompt, completion and total tokens.
[[nodiscard]] nlohmann::ordered_json usage_json(const Completion& c);

// The answer's text read into `c` as reply_completion reads it: content, reasoning and tool calls
// by `shape` (all content when null), the constraint's check, and the finish_reason from the
// engine's. The Batch API writes its output lines with it, so a batch answer reads as the same
// request's interactive one.
void fill_answer(Completion& c, const std::string& text, const std::string& engine_reason, const AnswerShape* shape);
// The completion of a done reply: its text and finish reason ("length" when the worker had no
// decoder), the record's prompt tokens and its decoder's output tokens (0 with none).
// `fingerprint`: the gateway's own (ChatPipeline::fingerprint()), used when the reply does not name
// its worker's decoder. With `shape` the text is parsed into content, reasoning and tool calls
// (answer_shape.hpp), and finish_reason is "tool_calls" when the engine stopped after calls; a
// constrained shape reads the text with its constraint and sets invalid_output when it fails.
[[nodiscard]] Completion reply_completion(const std::string& id, std::int64_t created, const std::string& model,
                                          const reply::Reply& reply, const std::string& fingerprint,
                                          const AnswerShape* shape = nullptr);
// "overhead-decoder-none", "overhead-decoder-sim", "overhead-decoder-openai" for a describe()
// text of ports::Decoder ("" = none).
[[nodiscard]] std::string decoder_fingerprint(const std::string& decoder_description);

[[nodiscard]] nlohmann::ordered_json completion_body(const Completion& c);
// One message.tool_calls entry: {id, type "function", function {name, arguments}}.
[[nodiscard]] nlohmann::ordered_json tool_call_json(const agent::ToolCall& call);
[[nodiscard]] nlohmann::ordered_json record_json(const ports::Record& r);

}  // namespace overhead::serve
