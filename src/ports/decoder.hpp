// The decoder stage D(y|x), the port: after the worker rendered and encoded an item (E(x)), a
// decoder produces the answer's tokens and the stamps of that stage, which the record carries
// (decode_start, first_token, decode_end, output_tokens). The adapters live in src/backends/
// (sim_decoder, openai_decoder) and are opened from the `--decoder` text by
// backends::open_decoder; `none` is no decoder at all (a null pointer: the worker's hot path
// pays one branch).
//
// The worker runs every generation through start(), which hands the answer to DecodeCallbacks as
// it streams (an asynchronous decoder keeps many generations in flight on its own thread); with
// --max-decodes 0 it waits for each one's end itself. A decoder implements the form natural to it
// and gets the other from the port: a synchronous one (sim) implements decode(), which blocks
// until the answer is whole, and its start() runs decode() on the caller's thread; an
// asynchronous one (openai) implements start(), and its decode() waits for start()'s end.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ports/errors.hpp"

namespace overhead::ports {

// Sampling and limits passed through to the engine (all optional: absent = the engine's default).
struct SamplingParams {
  std::optional<double> temperature, top_p, presence_penalty, frequency_penalty;
  std::optional<std::int64_t> seed;
  std::vector<std::string> stop;  // up to 4, as OpenAI
  std::string user;               // empty: not sent
};

// What of the prompt a decoder sends its engine (Decoder::prompt_form): nothing (a simulator),
// the rendered text (the engine tokenizes it again), or the token ids we encoded (tokenized once).
enum class PromptForm { none, text, ids };

struct DecodeRequest {
  // The rendered prompt the model continues (the chat template with the generation prompt);
  // filled when the decoder's prompt_form() is text or ids.
  std::string_view prompt;
  // Its token ids exactly as the template wrote them (special tokens parsed, nothing added: the
  // chat path's add_special_tokens=false, so a template that emits BOS gives exactly one); filled
  // when prompt_form() is ids.
  std::span<const std::uint32_t> prompt_ids;
  std::int64_t prompt_tokens = 0;  // the record's token_count
  // The wanted output length: the source record's answer counted with the item's tokenizer,
  // else the request's max_tokens, else 0 (unknown).
  std::int64_t max_tokens = 0;
  std::string_view tokenizer;  // the item's tokenizer name (a server's default model name)
  const SamplingParams* sampling = nullptr;  // null: the engine's defaults
  // A structured-output constraint: the JSON Schema (compact JSON text) the answer must follow,
  // sent in the engine's spelling; empty: none. A decoder that cannot constrain its engine fails
  // the generation (permanent, DecoderError::engine_refused), never answers unconstrained.
  std::string_view json_schema;
  bool stream_text = false;                  // the caller wants DecodeCallbacks::on_text deltas
};

struct DecodeResult {
  // Monotonic ns (ports/clock.hpp), the clock of every other stamp. first_token is 0 when no
  // token came (an empty answer).
  std::int64_t decode_start = 0;
  std::int64_t first_token = 0;
  std::int64_t decode_end = 0;
  // Tokens produced; -1 when the decoder cannot tell (a server without a usage chunk): the
  // worker then counts `text` with the item's tokenizer.
  std::int64_t output_tokens = 0;
  // The engine's usage.prompt_tokens: how many tokens it read as the prompt; -1 when it did not say.
  // The worker compares it with what it sent (Record::prompt_tokens_sent).
  std::int64_t engine_prompt_tokens = -1;
  std::string text;           // the answer's text, when the decoder has one
  std::string finish_reason;  // "stop", "length", "cancelled", ... as the engine said; empty: unknown
  bool cancelled = false;     // the caller cancelled (client gone, timeout): the engine was told to stop
};

// One generation's receiver. Called on the decoder's own thread(s) (the caller's thread for the
// default start()); never concurrently for one generation; on_text zero or more times, then
// exactly one of on_done / on_error. The callbacks must not block: an asynchronous decoder runs
// every generation in flight on the same thread.
class DecodeCallbacks {
 public:
  virtual ~DecodeCallbacks() = default;
  // Only when DecodeRequest::stream_text. Whole UTF-8 characters only (a token that ends inside
  // a character is held back until the character completes); in order; `tokens` = the engine's
  // tokens so far when known, else -1.
  virtual void on_text(std::string_view text, std::int64_t tokens) {
    (void)text;
    (void)tokens;
  }
  // Only from a decoder that streams_token_ids(): the ids the engine generated since the last
  // call, in order (the worker detokenizes them itself; on_text is then not called).
  virtual void on_token_ids(std::span<const std::uint32_t> ids) { (void)ids; }
  // result.text holds the whole answer (also when it was streamed through on_text); from a decoder
  // that streams ids, the engine's own text (the worker's detokenized text replaces it).
  virtual void on_done(DecodeResult result) = 0;
  // As decode() would throw it: transient when a retry may help.
  virtual void on_error(const DecoderError& error) = 0;
};

// A started generation. cancel() is thread-safe and idempotent: the engine's request is closed
// (the engine stops generating) and the callbacks end with on_done(result.cancelled = true),
// unless they had already ended. Dropping the ticket does not cancel.
class DecodeTicket {
 public:
  virtual ~DecodeTicket() = default;
  virtual void cancel() = 0;
};

class Decoder {
 public:
  virtual ~Decoder() = default;
  // The spec it was opened from, e.g. "sim:prefill=5000,decode=50,ttft_ms=0" (no secrets).
  [[nodiscard]] virtual std::string describe() const = 0;
  // What of the prompt decode() reads (the worker renders, and encodes for the engine, only what
  // it needs): none, DecodeRequest::prompt, or DecodeRequest::prompt_ids.
  [[nodiscard]] virtual PromptForm prompt_form() const { return PromptForm::none; }
  // Whether the answer comes as token ids (DecodeCallbacks::on_token_ids), for the worker to turn
  // into text with the item's tokenizer (and to match the stop strings on), as serving engines'
  // own fronts do.
  [[nodiscard]] virtual bool streams_token_ids() const { return false; }
  // One generation, the caller's thread blocked until the answer is whole (request.stream_text is
  // ignored). Thread-safe. Throws DecoderError (errors.hpp), transient when a retry may help. This
  // default waits for start(); it must not run inside one of this decoder's callbacks (an
  // asynchronous decoder's own thread). A decoder overrides decode() or start(), or both.
  [[nodiscard]] virtual DecodeResult decode(const DecodeRequest& request) const;
  // Starts one generation and returns at once (an asynchronous decoder) or after it finished
  // (this default: runs decode() on the caller's thread, then calls on_text once with the whole
  // text when request.stream_text, and on_done / on_error, before returning). Thread-safe. Many
  // generations may be in flight at once; the caller bounds how many (--max-decodes). The
  // request's string_views need to stay valid only until start() returns (the decoder copies what
  // it keeps). Never throws for a failed generation: that goes to on_error, whose transient
  // errors the worker retries (dead-lettering the item, decode_failed, when it still fails).
  [[nodiscard]] virtual std::shared_ptr<DecodeTicket> start(const DecodeRequest& request,
                                                            std::shared_ptr<DecodeCallbacks> callbacks) const;
};

}  // namespace overhead::ports
