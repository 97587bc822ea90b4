// A streamed chat completion (`stream: true`), kept apart from the HTTP server that carries it:
// CompletionStream turns a request's text, as it arrives, into `chat.completion.chunk` server-sent
// events (a role delta, one content delta per piece, the finish chunk, the usage chunk when asked,
// `data: [DONE]`). A StreamPump (stream_pump.hpp) feeds it from the ReplyBox to the client.
//
// Per piece of text the cost is one JSON string escape between a prefix and a suffix built once
// per stream: no DOM per event.
//
// A stream that cannot go on (its worker died mid-stream and the item was generated again, the
// worker refused it after text went out, no answer in time) ends with an error event,
// `data: {"error":{...}}`, never a silent cut or a repeated prefix.
#pragma once

#include <string>
#include <string_view>

#include "reply/reply.hpp"
#include "serve/api_error.hpp"
#include "serve/completion_json.hpp"

namespace overhead::serve {

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

}  // namespace overhead::serve
