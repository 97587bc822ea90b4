// `--decoder openai:URL[,model=NAME][,dialect=D][,prompt=ids|text][,output=ids|text][,timeout_ms=MS][,usage=required][,coalesce_us=US][,api_key_env=NAME]`:
// the decoder stage on a real OpenAI-compatible server (vLLM, llama.cpp's server, SGLang, TGI). URL
// is the API base as OpenAI clients take it (e.g. http://127.0.0.1:8000/v1); each generation is
// one POST URL/completions with the prompt we rendered, `max_tokens` = the wanted
// length (left out when unknown), the request's sampling fields (temperature, top_p, stop, seed,
// presence_penalty, frequency_penalty, user), `stream: true` and
// `stream_options: {include_usage: true}`. `model` is NAME, else the item's tokenizer name.
//
// The prompt (tokenize once): with prompt=ids it is the token ids we encoded, exactly the
// template's tokens (nothing added: one BOS when the template writes one), so the engine does not
// tokenize it again; with prompt=text it is the rendered text, which the engine tokenizes itself
// (adding its BOS). dialect= names the engine (backends/engine_dialect.hpp) and picks the
// default: ids for vllm, sglang and llamacpp; text for openai (the default dialect) and tgi, which
// takes no ids. The engine's usage.prompt_tokens comes back as DecodeResult::engine_prompt_tokens;
// the worker compares it with what it sent. An engine that refuses ids (a vocabulary that is not
// the tokenizer's: ids out of its range) is a permanent engine_refused error naming the model and
// the tokenizer, never retried as text.
//
// A structured-output constraint (DecodeRequest::json_schema) goes into the body as the dialect
// spells it (engine_dialect.hpp: vllm structured_outputs.json, sglang json_schema as a string,
// llamacpp json_schema); dialect=openai and dialect=tgi have no such field, so a constrained
// request is a permanent engine_refused error saying which dialect= to set (the client's 400).
//
// The answer (output=ids, dialect=vllm only): the engine is asked for the generated token ids
// (return_token_ids) and the decoder hands them on (DecodeCallbacks::on_token_ids) for the worker
// to detokenize with the item's tokenizer and match the stop strings on, as engines' own fronts
// do; output=text (the default) passes the engine's text on.
//
// Credentials: api_key_env=NAME sends the key in the environment variable NAME as
// `Authorization: Bearer KEY` (read once, at parsing; never shown: describe() names the variable);
// a URL's user info (http://USER:PASSWORD@host/v1) is sent as basic auth, and every message and
// describe() show the URL with its password redacted (ports::redact_url).
//
// Asynchronous: every generation is a transfer on the decoder's one CurlStreamLoop thread (one curl
// multi handle, hundreds of streams in flight, no thread per stream). start() returns at once.
// With many streams in flight the loop gathers their events for a window of `coalesce_us`
// (default 5000; 0: never) per wake-up (the rule: curl_stream_loop.hpp). The events are read as
// they arrive without a DOM (openai_stream_event), first_token is stamped
// at the first text, decode_end at `data: [DONE]`; output_tokens is the usage chunk's
// completion_tokens, else -1 (the worker counts the text with the item's tokenizer; with
// usage=required a stream without usage is an error); finish_reason is the engine's. cancel()
// closes the transfer, so the server sees the client go and stops generating. decode() is the
// port's: start() waited for.
//
// Errors are DecoderError: a refused or lost connection, a timeout, 429 and 5xx are transient (with
// the body's message, cut on a character boundary and made valid UTF-8); a 4xx that blames the
// request (DecoderError::engine_refused: not 401, 403, 407, 408, 429) is permanent and carries the
// engine's status and message for the client; any other status, a stream that is no OpenAI stream, an error event, or a
// missing usage chunk when required are permanent; a stream that ends without [DONE] is transient
// (a dropped stream may go through next time).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include "backends/engine_dialect.hpp"
#include "ports/decoder.hpp"

namespace overhead::backends {

inline constexpr std::chrono::microseconds kDefaultCoalesceWindow{5000};

struct OpenAiDecoderParams {
  std::string base_url;  // without a trailing '/'
  std::string model;     // empty: the item's tokenizer name
  EngineDialect dialect = EngineDialect::openai;                // dialect=
  ports::PromptForm prompt = ports::PromptForm::text;           // prompt=, else the dialect's default
  bool output_ids = false;                                      // output=ids
  std::chrono::milliseconds timeout{600000};
  bool usage_required = false;  // usage=required
  std::chrono::microseconds coalesce_window = kDefaultCoalesceWindow;  // coalesce_us=
  std::string api_key_env;  // api_key_env=: the variable's name (shown)
  std::string api_key;      // its value: sent as a Bearer token, never shown
};

class CurlStreamLoop;
struct OpenAiStreamSettings;

class OpenAiDecoder final : public ports::Decoder {
 public:
  explicit OpenAiDecoder(OpenAiDecoderParams p);
  // Closes the loop: generations still running end with on_error (transient). Must not run inside
  // one of this decoder's callbacks.
  ~OpenAiDecoder() override;
  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] ports::PromptForm prompt_form() const override { return p_.prompt; }
  [[nodiscard]] bool streams_token_ids() const override { return p_.output_ids; }
  [[nodiscard]] std::shared_ptr<ports::DecodeTicket> start(const ports::DecodeRequest& request,
                                                          std::shared_ptr<ports::DecodeCallbacks> callbacks) const override;
  // Generations started and not yet ended (a gauge for tests and benchmarks).
  [[nodiscard]] std::size_t in_flight() const;

 private:
  OpenAiDecoderParams p_;
  std::shared_ptr<const OpenAiStreamSettings> settings_;
  std::shared_ptr<CurlStreamLoop> loop_;
};

// The JSON body of one generation's POST /v1/completions. Throws DecoderError (permanent; an
// engine_refused one for a constraint the dialect cannot spell).
[[nodiscard]] std::string completion_request_body(const ports::DecodeRequest& request, const OpenAiDecoderParams& p);

// The text after "openai:". Throws std::invalid_argument naming the bad part.
[[nodiscard]] OpenAiDecoderParams parse_openai_decoder(std::string_view params);

}  // namespace overhead::backends
