// A streamed chat completion (`stream: true`), kept apart from the HTTP server that carries it:
// CompletionStream turns a request's text, as it arrives, into `chat.completion.chunk` server-sent
// events (a role delta, one content delta per piece, the finish chunk, the usage chunk when asked,
// `data: [DONE]`), and pump_stream() feeds it from the ReplyBox to any writer. The HTTP glue
// (chat_routes.cpp) only hands pump_stream a write function; an event-loop server with a
// push-based response needs the same two pieces.
//
// Per piece of text the cost is one JSON string escape between a prefix and a suffix built once
// per stream: no DOM per event.
//
// A stream that cannot go on (its worker died mid-stream and the item was generated again, the
// worker refused it after text went out, no answer in time) ends with an error event,
// `data: {"error":{...}}`, never a silent cut or a repeated prefix.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "reply/reply.hpp"
#include "serve/api_error.hpp"
#include "serve/completion_json.hpp"

namespace overhead::serve {

class ReplyBox;

class CompletionStream {
 public:
  // `head`: id, created, model and fingerprint (content and counts are not read).
  CompletionStream(const Completion& head, bool include_usage);

  // The first event: the assistant's role.
  [[nodiscard]] std::string start() const;
  // One content delta.
  void append_text(std::string& out, std::string_view piece) const;
  // The last events of a done reply: the finish chunk, the usage chunk when asked, [DONE].
  [[nodiscard]] std::string finish(const reply::Reply& reply) const;
  // The event that ends a stream that cannot go on.
  [[nodiscard]] static std::string error(const ApiError& e);

 private:
  Completion head_;
  bool include_usage_;
  std::string content_prefix_, content_suffix_;
};

// The error of a stream whose generation restarted after text went out.
[[nodiscard]] ApiError stream_interrupted_error();

// Feeds `stream` from the box until the request `id` finishes, restarts or `deadline` passes,
// starting after the `have` bytes the caller already wrote, and writes the events through
// `write` (false: the client is gone, stop). Returns the final reply when the request finished
// done and every event was written; else empty (the error event, if any, was written).
using WriteEvents = std::function<bool(std::string_view events)>;
[[nodiscard]] std::optional<reply::Reply> pump_stream(ReplyBox& box, const std::string& id, const CompletionStream& stream,
                                                      std::size_t have, std::chrono::steady_clock::time_point deadline,
                                                      const WriteEvents& write,
                                                      const std::function<ApiError(const reply::Reply&)>& refusal);

}  // namespace overhead::serve
