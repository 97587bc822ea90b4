// `--decoder openai:URL[,model=NAME][,timeout_ms=MS]`: the decoder stage on a real
// OpenAI-compatible server (vLLM, llama.cpp's server, TGI). URL is the API base as OpenAI clients
// take it (e.g. http://127.0.0.1:8000/v1); each item is one POST URL/completions with the
// rendered prompt, `max_tokens` = the wanted length (left out when unknown), `stream: true` and
// `stream_options: {include_usage: true}`. The server-sent stream is read as it arrives:
// first_token is stamped at the first chunk with text, decode_end at `data: [DONE]`;
// output_tokens is the final usage chunk's completion_tokens, else -1 (the worker counts the
// text with the item's tokenizer). `model` is NAME, else the item's tokenizer name.
//
// Errors are DecoderError: a refused or lost connection, a timeout, 429 and 5xx are transient; any
// other status, a stream that is no OpenAI stream, or one that ends without [DONE] are permanent
// (the last: transient, a dropped stream may go through next time).
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "pipe/decoder.hpp"

namespace overhead::backends {

struct OpenAiDecoderParams {
  std::string base_url;  // without a trailing '/'
  std::string model;     // empty: the item's tokenizer name
  std::chrono::milliseconds timeout{600000};
};

class OpenAiDecoder final : public pipe::Decoder {
 public:
  explicit OpenAiDecoder(OpenAiDecoderParams p);
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] bool needs_prompt() const override { return true; }
  [[nodiscard]] pipe::DecodeResult decode(const pipe::DecodeRequest& request) const override;

 private:
  OpenAiDecoderParams p_;
};

// The text after "openai:". Throws std::invalid_argument naming the bad part.
[[nodiscard]] OpenAiDecoderParams parse_openai_decoder(std::string_view params);

}  // namespace overhead::backends
