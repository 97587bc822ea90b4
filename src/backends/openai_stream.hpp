// OpenAiStream: one generation on an OpenAI-compatible server, as a transfer of the decoder's
// CurlStreamLoop: POST {base}/completions with stream: true, the server-sent events read as they
// arrive (first_token at the first text, decode_end at `data: [DONE]`), each event's text handed to
// DecodeCallbacks::on_text (whole UTF-8 characters: the event parser validates them), and the end
// as exactly one on_done / on_error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/curl_stream_loop.hpp"
#include "ports/decoder.hpp"

namespace overhead::backends {

struct OpenAiStreamSettings {
  std::string url;                 // {base}/completions, with the URL's user info (curl sends it as basic auth)
  std::string shown_url;           // url with its password redacted: the one for messages
  std::shared_ptr<curl_slist> headers;  // Content-Type, Accept, Authorization (curl keeps a pointer, not a copy)
  long timeout_ms = 600000;        // the whole generation
  bool usage_required = false;     // a stream without usage is an error (else output_tokens = -1)
  // output=ids: the answer is handed on as the events' token ids (on_token_ids), not as text; a
  // stream with text and no ids is an error (the engine ignored the request for them).
  bool token_ids = false;
};

class OpenAiStream final : public CurlTransfer {
 public:
  // Sets the easy handle up to POST `payload`; stamps decode_start.
  // `refusal_hint`: put before the engine's message when it refuses the request (a 4xx that blames
  // it), saying what that most likely means; empty: the engine's message alone.
  OpenAiStream(std::shared_ptr<const OpenAiStreamSettings> settings, std::string payload, bool stream_text, std::int64_t max_tokens,
               std::string refusal_hint, std::shared_ptr<ports::DecodeCallbacks> callbacks);

  void on_finished(CURLcode result) override;
  void on_cancelled() override;
  void on_closed() override;

 private:
  static std::size_t on_write(char* data, std::size_t size, std::size_t n, void* self);
  bool feed(const char* data, std::size_t size);  // false: stop the transfer (protocol_error_ says why)
  bool on_line(std::string_view line);
  bool on_data(std::string_view data);
  void fail(const std::string& what, ports::Failure failure);

  std::shared_ptr<const OpenAiStreamSettings> settings_;
  std::string payload_;
  bool stream_text_;
  std::string refusal_hint_;
  std::shared_ptr<ports::DecodeCallbacks> callbacks_;
  ports::DecodeResult result_;
  long status_ = 0;
  bool done_ = false;              // `data: [DONE]` came
  bool usage_seen_ = false;
  std::size_t ids_seen_ = 0;       // token ids handed on (output=ids)
  std::string pending_;            // bytes after the last complete line
  std::string event_;              // the event being parsed, with the parser's padding
  std::string error_body_;         // a non-200 answer's body (the first 4 KB)
  std::string protocol_error_;     // why the stream is no OpenAI stream
};

}  // namespace overhead::backends
