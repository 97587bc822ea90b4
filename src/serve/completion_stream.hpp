// A streamed chat completion (`stream: true`), kept apart from the HTTP server that carries it:
// CompletionStream turns a request's text, as it arrives, into `chat.completion.chunk` server-sent
// events (a role delta, one content delta per piece, the finish chunk, the usage chunk when asked,
// `data: [DONE]`); for /v1/completions (Completion::text_completion) `text_completion` chunks with
// the piece as `choices[0].text` and no role event. A StreamPump (stream_pump.hpp) feeds it from
// the ReplyBox to the client.
//
// Per piece of text the cost is one JSON string escape between a prefix and a suffix built once
// per stream: no DOM per event.
//
// With an AnswerShape (answer_shape.hpp) the text goes through one agent::AnswerParser per stream:
// its deltas become `delta.content`, `delta.reasoning_content` and `delta.tool_calls` ({index, and
// on a call's first delta its id, type "function" and function.name, then function.arguments}),
// and the finish chunk says "tool_calls" when calls were sent and the engine stopped of itself.
// The parser sends a call only once it is complete (CallRelease::whole_calls), and only a done
// reply flushes what it holds back (finish()): a stream that ends with an error never presents
// half a call as a call.
//
// A constrained answer (AnswerShape::constraint) is one JSON document read whole: under
// response_format its text streams as content deltas and is validated at the end; under
// tool_choice required / named nothing of it is content, and its calls are sent whole (id, type,
// name and arguments in one delta each) once the text is complete. An answer that does not
// follow its constraint ends with an `invalid_structured_output` error event instead of the
// finish chunk (answer_constraint.hpp).
//
// A stream that cannot go on (its worker died mid-stream and the item was generated again, the
// worker refused it after text went out, no answer in time) ends with an error event,
// `data: {"error":{...}}`, never a silent cut or a repeated prefix.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/answer_parser.hpp"

#include "reply/reply.hpp"
#include "serve/api_error.hpp"
#include "serve/completion_json.hpp"

namespace overhead::serve {

class CompletionStream {
 public:
  // `head`: id, created, model and fingerprint (content and counts are not read). `shape`: how the
  // text is parsed (null: all content).
  CompletionStream(const Completion& head, bool include_usage, std::shared_ptr<const AnswerShape> shape = nullptr);

  // The first event: the assistant's role.
  [[nodiscard]] std::string start() const;
  // The deltas of the next piece of the engine's text (one content delta without a shape).
  void append_text(std::string& out, std::string_view piece);
  // The last events of a done reply: what the parser held back, the finish chunk, the usage
  // chunk when asked, [DONE].
  [[nodiscard]] std::string finish(const reply::Reply& reply);
  // The event that ends a stream that cannot go on.
  [[nodiscard]] static std::string error(const ApiError& e);

 private:
  void append_deltas(std::string& out, const std::vector<agent::Delta>& deltas);
  static void append_event(std::string& out, const std::string& prefix, const std::string& suffix, std::string_view text);

  Completion head_;
  bool include_usage_;
  std::string content_prefix_, content_suffix_;
  std::string reasoning_prefix_, reasoning_suffix_;
  std::shared_ptr<const AnswerShape> shape_;
  std::unique_ptr<agent::AnswerParser> parser_;  // with a shape
  std::vector<agent::Delta> deltas_;             // reused per piece
  std::size_t calls_sent_ = 0;
  std::string constrained_text_;  // a constrained answer's text so far, read whole at the end
};

// The error of a stream whose generation restarted after text went out.
[[nodiscard]] ApiError stream_interrupted_error();

}  // namespace overhead::serve
