#include "backends/openai_decoder.hpp"

#include <charconv>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "backends/curl_stream_loop.hpp"
#include "backends/openai_stream.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

namespace {

using ports::DecoderError;
using ports::Failure;

void global_init() {
  // curl_global_init is not thread-safe; once, before the first handle (as aws/http_client does).
  static const bool ok = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  if (!ok) throw DecoderError("openai decoder: curl_global_init failed", Failure::permanent);
}

// cancel() reaches the stream through the loop while both live; after the decoder is gone (its
// loop closed every stream) there is nothing left to cancel.
class StreamTicket final : public ports::DecodeTicket {
 public:
  StreamTicket(std::weak_ptr<CurlStreamLoop> loop, std::weak_ptr<OpenAiStream> stream)
      : loop_(std::move(loop)), stream_(std::move(stream)) {}
  void cancel() override {
    const auto loop = loop_.lock();
    const auto stream = stream_.lock();
    if (loop && stream) loop->cancel(stream);
  }

 private:
  std::weak_ptr<CurlStreamLoop> loop_;
  std::weak_ptr<OpenAiStream> stream_;
};

}  // namespace

std::string completion_request_body(const ports::DecodeRequest& request, const OpenAiDecoderParams& p) {
  nlohmann::json body = {{"model", p.model.empty() ? std::string(request.tokenizer) : p.model},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}}};
  if (p.prompt == ports::PromptForm::ids) {
    if (request.prompt_ids.empty())
      throw DecoderError("openai decoder: prompt=ids, and the item's prompt has no token ids", Failure::permanent);
    body["prompt"] = request.prompt_ids;
  } else {
    body["prompt"] = std::string(request.prompt);
  }
  if (p.output_ids) body[std::string(dialect_traits(p.dialect).token_ids_field)] = true;
  if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
  if (const ports::SamplingParams* s = request.sampling) {
    if (s->temperature) body["temperature"] = *s->temperature;
    if (s->top_p) body["top_p"] = *s->top_p;
    if (s->presence_penalty) body["presence_penalty"] = *s->presence_penalty;
    if (s->frequency_penalty) body["frequency_penalty"] = *s->frequency_penalty;
    if (s->seed) body["seed"] = *s->seed;
    if (!s->stop.empty()) body["stop"] = s->stop;
    if (!s->user.empty()) body["user"] = s->user;
  }
  if (!request.json_schema.empty()) {
    // A dialect that cannot constrain refuses the request: an unconstrained answer must never be
    // presented as a constrained one. The client gets a 400 (engine_refused) saying what to set.
    try {
      add_constraint(body, dialect_traits(p.dialect), request.json_schema);
    } catch (const std::invalid_argument& e) {
      throw DecoderError::engine_refused("openai decoder: " + std::string(e.what()), e.what());
    } catch (const nlohmann::json::exception& e) {
      throw DecoderError("openai decoder: the item's json_schema is not JSON: " + std::string(e.what()), Failure::permanent);
    }
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

OpenAiDecoderParams parse_openai_decoder(std::string_view text) {
  const std::string form =
      "expected openai:URL[,model=NAME][,dialect=" + std::string(dialect_names()) +
      "][,prompt=ids|text][,output=ids|text][,timeout_ms=MS][,usage=required][,coalesce_us=US][,api_key_env=NAME], URL e.g. "
      "http://127.0.0.1:8000/v1";
  OpenAiDecoderParams p;
  const std::size_t comma = text.find(',');
  std::string_view url = text.substr(0, comma);
  // The URL may hold a password (http://USER:PASSWORD@host/v1): errors show it redacted.
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    throw std::invalid_argument("openai: '" + ports::redact_url(url) + "' is not an http:// or https:// URL (" + form + ")");
  if (url.find_first_of(" \t\r\n") != std::string_view::npos || url.size() <= url.find("//") + 2)
    throw std::invalid_argument("openai: '" + ports::redact_url(url) + "' is not a URL (" + form + ")");
  while (url.ends_with('/')) url.remove_suffix(1);
  p.base_url = std::string(url);
  bool have_model = false, have_timeout = false, have_usage = false, have_coalesce = false, have_key = false;
  bool have_dialect = false;
  std::optional<ports::PromptForm> prompt;
  bool have_output = false;
  for (std::size_t pos = comma; pos != std::string_view::npos && pos < text.size();) {
    const std::size_t next = text.find(',', pos + 1);
    const std::string_view part = text.substr(pos + 1, next == std::string_view::npos ? std::string_view::npos : next - pos - 1);
    pos = next;
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("openai: '" + ports::redact_url(part) + "' is not KEY=VALUE (" + form +
                                  "; a ',' in the URL's password is written %2C)");
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "model") {
      if (have_model) throw std::invalid_argument("openai: 'model' given twice");
      if (value.empty()) throw std::invalid_argument("openai: 'model' is empty");
      have_model = true;
      p.model = std::string(value);
    } else if (key == "dialect") {
      if (have_dialect) throw std::invalid_argument("openai: 'dialect' given twice");
      have_dialect = true;
      const auto d = parse_dialect(value);
      if (!d)
        throw std::invalid_argument("openai: '" + std::string(part) + "': dialect must be one of " +
                                    std::string(dialect_names()) + " (the engine behind the URL)");
      p.dialect = *d;
    } else if (key == "prompt") {
      if (prompt) throw std::invalid_argument("openai: 'prompt' given twice");
      if (value == "ids") prompt = ports::PromptForm::ids;
      else if (value == "text") prompt = ports::PromptForm::text;
      else throw std::invalid_argument("openai: '" + std::string(part) + "': prompt must be ids or text");
    } else if (key == "output") {
      if (have_output) throw std::invalid_argument("openai: 'output' given twice");
      have_output = true;
      if (value != "ids" && value != "text")
        throw std::invalid_argument("openai: '" + std::string(part) + "': output must be ids or text");
      p.output_ids = value == "ids";
    } else if (key == "timeout_ms") {
      if (have_timeout) throw std::invalid_argument("openai: 'timeout_ms' given twice");
      have_timeout = true;
      long long ms = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ms);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || ms <= 0)
        throw std::invalid_argument("openai: '" + std::string(part) + "': timeout_ms must be a positive integer");
      p.timeout = std::chrono::milliseconds(ms);
    } else if (key == "usage") {
      if (have_usage) throw std::invalid_argument("openai: 'usage' given twice");
      have_usage = true;
      if (value != "required" && value != "optional")
        throw std::invalid_argument("openai: '" + std::string(part) + "': usage must be required or optional");
      p.usage_required = value == "required";
    } else if (key == "coalesce_us") {
      if (have_coalesce) throw std::invalid_argument("openai: 'coalesce_us' given twice");
      have_coalesce = true;
      long long us = -1;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), us);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || us < 0 || us > 100000)
        throw std::invalid_argument("openai: '" + std::string(part) + "': coalesce_us must be an integer from 0 to 100000");
      p.coalesce_window = std::chrono::microseconds(us);
    } else if (key == "api_key_env") {
      if (have_key) throw std::invalid_argument("openai: 'api_key_env' given twice");
      have_key = true;
      if (value.empty()) throw std::invalid_argument("openai: 'api_key_env' is empty (the NAME of an environment variable)");
      p.api_key_env = std::string(value);
      const char* key_text = std::getenv(p.api_key_env.c_str());
      if (!key_text || !*key_text)
        throw std::invalid_argument("openai: api_key_env=" + p.api_key_env + ": the environment variable " + p.api_key_env +
                                    " is not set or empty");
      p.api_key = key_text;
      // The key goes into a header line: a control character would end it (and is never a key's).
      for (const char c : p.api_key)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
          throw std::invalid_argument("openai: api_key_env=" + p.api_key_env + ": the key in " + p.api_key_env +
                                      " holds a control character");
    } else {
      throw std::invalid_argument("openai: unknown parameter '" + ports::redact_url(key) + "' (" + form + ")");
    }
  }
  const DialectTraits& traits = dialect_traits(p.dialect);
  p.prompt = prompt.value_or(traits.default_prompt);
  if (p.prompt == ports::PromptForm::ids && !traits.takes_prompt_ids)
    throw std::invalid_argument("openai: prompt=ids: dialect=" + std::string(traits.name) +
                                " takes the prompt as text only; use prompt=text");
  if (p.output_ids && traits.token_ids_field.empty())
    throw std::invalid_argument("openai: output=ids: dialect=" + std::string(traits.name) +
                                " does not stream the answer's token ids on /v1/completions (dialect=vllm does); use "
                                "output=text");
  return p;
}

OpenAiDecoder::OpenAiDecoder(OpenAiDecoderParams p) : p_(std::move(p)) {
  global_init();
  auto settings = std::make_shared<OpenAiStreamSettings>();
  settings->url = p_.base_url + "/completions";
  settings->shown_url = ports::redact_url(settings->url);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: text/event-stream");
  if (!p_.api_key.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + p_.api_key).c_str());
  settings->headers = std::shared_ptr<curl_slist>(headers, &curl_slist_free_all);
  settings->timeout_ms = static_cast<long>(p_.timeout.count());
  settings->usage_required = p_.usage_required;
  settings->token_ids = p_.output_ids;
  settings_ = std::move(settings);
  CoalescePolicy coalesce;
  coalesce.max_window = p_.coalesce_window;
  loop_ = std::make_shared<CurlStreamLoop>(coalesce);
}

OpenAiDecoder::~OpenAiDecoder() = default;

std::string OpenAiDecoder::describe() const {
  // Shown at start-up, in dead letters and errors, in summary.json: the password redacted, the key
  // only by the name of its variable.
  const DialectTraits& traits = dialect_traits(p_.dialect);
  return "openai:" + ports::redact_url(p_.base_url) + (p_.model.empty() ? "" : ",model=" + p_.model) +
         (p_.dialect == EngineDialect::openai ? "" : ",dialect=" + std::string(traits.name)) +
         (p_.prompt == traits.default_prompt ? "" : p_.prompt == ports::PromptForm::ids ? ",prompt=ids" : ",prompt=text") +
         (p_.output_ids ? ",output=ids" : "") +
         (p_.usage_required ? ",usage=required" : "") +
         (p_.coalesce_window != kDefaultCoalesceWindow ? ",coalesce_us=" + std::to_string(p_.coalesce_window.count()) : "") +
         (p_.api_key_env.empty() ? "" : ",api_key_env=" + p_.api_key_env);
}

std::size_t OpenAiDecoder::in_flight() const { return loop_->in_flight(); }

std::shared_ptr<ports::DecodeTicket> OpenAiDecoder::start(const ports::DecodeRequest& request,
                                                         std::shared_ptr<ports::DecodeCallbacks> callbacks) const {
  std::string body;
  try {
    body = completion_request_body(request, p_);
  } catch (const DecoderError& e) {
    callbacks->on_error(e);
    return nullptr;
  }
  // What an engine's refusal of our ids means, for the client and the dead letter (used when the
  // engine's message is about a token id: openai_stream.cpp).
  std::string refusal_hint;
  if (p_.prompt == ports::PromptForm::ids)
    refusal_hint = "the engine refused the prompt's token ids (model " +
                   (p_.model.empty() ? std::string(request.tokenizer) : p_.model) + ", tokenizer " +
                   std::string(request.tokenizer) +
                   "): an engine whose vocabulary is not the tokenizer's refuses ids out of its range; serve the "
                   "tokenizer's model or name it with model=";
  auto stream = std::make_shared<OpenAiStream>(settings_, std::move(body), request.stream_text, request.max_tokens,
                                               std::move(refusal_hint), std::move(callbacks));
  auto ticket = std::make_shared<StreamTicket>(loop_, stream);
  loop_->add(std::move(stream));
  return ticket;
}

}  // namespace overhead::backends
