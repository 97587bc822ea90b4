// The decoder stage D(y|x), the port: after the worker rendered and encoded an item (E(x)), a
// decoder produces the answer's tokens and the stamps of that stage, which the record carries
// (decode_start, first_token, decode_end, output_tokens). The adapters live in src/backends/
// (sim_decoder, openai_decoder) and are opened from the `--decoder` text by
// backends::open_decoder; `none` is no decoder at all (a null pointer: the worker's hot path
// pays one branch).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace overhead::pipe {

struct DecodeRequest {
  // The rendered prompt the model continues (the chat template with the generation prompt);
  // only filled when the decoder needs_prompt().
  std::string_view prompt;
  std::int64_t prompt_tokens = 0;  // the record's token_count
  // The wanted output length: the source record's answer counted with the item's tokenizer,
  // else the request's max_tokens, else 0 (unknown).
  std::int64_t max_tokens = 0;
  std::string_view tokenizer;  // the item's tokenizer name (a server's default model name)
};

struct DecodeResult {
  // Monotonic ns (pipe/clock.hpp), the clock of every other stamp. first_token is 0 when no
  // token came (an empty answer).
  std::int64_t decode_start = 0;
  std::int64_t first_token = 0;
  std::int64_t decode_end = 0;
  // Tokens produced; -1 when the decoder cannot tell (a server without a usage chunk): the
  // worker then counts `text` with the item's tokenizer.
  std::int64_t output_tokens = 0;
  std::string text;  // the answer's text, when the decoder has one
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // The spec it was opened from, e.g. "sim:prefill=5000,decode=50,ttft_ms=0" (no secrets).
  [[nodiscard]] virtual std::string describe() const = 0;
  // Whether decode() reads DecodeRequest::prompt (the worker renders it only then).
  [[nodiscard]] virtual bool needs_prompt() const { return false; }
  // Thread-safe: called from every worker thread at once. Throws DecoderError (errors.hpp),
  // transient when a retry may help; the worker retries those and dead-letters the item
  // (decode_failed) when it still fails.
  [[nodiscard]] virtual DecodeResult decode(const DecodeRequest& request) const = 0;
};

}  // namespace overhead::pipe
