#include "backends/openai_decoder.hpp"

#include <charconv>
#include <future>
#include <stdexcept>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "backends/curl_stream_loop.hpp"
#include "backends/openai_stream.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

namespace {

using pipe::DecoderError;
using pipe::Failure;

void global_init() {
  // curl_global_init is not thread-safe; once, before the first handle (as aws/http_client does).
  static const bool ok = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  if (!ok) throw DecoderError("openai decoder: curl_global_init failed", Failure::permanent);
}

std::string request_body(const pipe::DecodeRequest& request, const std::string& model) {
  nlohmann::json body = {{"model", model.empty() ? std::string(request.tokenizer) : model},
                         {"prompt", std::string(request.prompt)},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}}};
  if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
  if (const pipe::SamplingParams* s = request.sampling) {
    if (s->temperature) body["temperature"] = *s->temperature;
    if (s->top_p) body["top_p"] = *s->top_p;
    if (s->presence_penalty) body["presence_penalty"] = *s->presence_penalty;
    if (s->frequency_penalty) body["frequency_penalty"] = *s->frequency_penalty;
    if (s->seed) body["seed"] = *s->seed;
    if (!s->stop.empty()) body["stop"] = s->stop;
    if (!s->user.empty()) body["user"] = s->user;
  }
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// cancel() reaches the stream through the loop while both live; after the decoder is gone (its
// loop closed every stream) there is nothing left to cancel.
class StreamTicket final : public pipe::DecodeTicket {
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

// decode(): the callbacks fill a promise the caller waits on.
class WaitedCallbacks final : public pipe::DecodeCallbacks {
 public:
  std::promise<pipe::DecodeResult> promise;
  void on_done(pipe::DecodeResult result) override { promise.set_value(std::move(result)); }
  void on_error(const DecoderError& error) override { promise.set_exception(std::make_exception_ptr(error)); }
};

}  // namespace

OpenAiDecoderParams parse_openai_decoder(std::string_view text) {
  const std::string form =
      "expected openai:URL[,model=NAME][,timeout_ms=MS][,usage=required], URL e.g. http://127.0.0.1:8000/v1";
  OpenAiDecoderParams p;
  const std::size_t comma = text.find(',');
  std::string_view url = text.substr(0, comma);
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    throw std::invalid_argument("openai: '" + std::string(url) + "' is not an http:// or https:// URL (" + form + ")");
  if (url.find_first_of(" \t\r\n") != std::string_view::npos || url.size() <= url.find("//") + 2)
    throw std::invalid_argument("openai: '" + std::string(url) + "' is not a URL (" + form + ")");
  while (url.ends_with('/')) url.remove_suffix(1);
  p.base_url = std::string(url);
  bool have_model = false, have_timeout = false, have_usage = false;
  for (std::size_t pos = comma; pos != std::string_view::npos && pos < text.size();) {
    const std::size_t next = text.find(',', pos + 1);
    const std::string_view part = text.substr(pos + 1, next == std::string_view::npos ? std::string_view::npos : next - pos - 1);
    pos = next;
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument("openai: '" + std::string(part) + "' is not KEY=VALUE (" + form + ")");
    const std::string_view key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "model") {
      if (have_model) throw std::invalid_argument("openai: 'model' given twice");
      if (value.empty()) throw std::invalid_argument("openai: 'model' is empty");
      have_model = true;
      p.model = std::string(value);
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
    } else {
      throw std::invalid_argument("openai: unknown parameter '" + std::string(key) + "' (" + form + ")");
    }
  }
  return p;
}

OpenAiDecoder::OpenAiDecoder(OpenAiDecoderParams p) : p_(std::move(p)) {
  global_init();
  auto settings = std::make_shared<OpenAiStreamSettings>();
  settings->url = p_.base_url + "/completions";
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: text/event-stream");
  settings->headers = std::shared_ptr<curl_slist>(headers, &curl_slist_free_all);
  settings->timeout_ms = static_cast<long>(p_.timeout.count());
  settings->usage_required = p_.usage_required;
  settings_ = std::move(settings);
  loop_ = std::make_shared<CurlStreamLoop>();
}

OpenAiDecoder::~OpenAiDecoder() = default;

std::string OpenAiDecoder::describe() const {
  return "openai:" + p_.base_url + (p_.model.empty() ? "" : ",model=" + p_.model) +
         (p_.usage_required ? ",usage=required" : "");
}

std::size_t OpenAiDecoder::in_flight() const { return loop_->in_flight(); }

std::shared_ptr<pipe::DecodeTicket> OpenAiDecoder::start(const pipe::DecodeRequest& request,
                                                         std::shared_ptr<pipe::DecodeCallbacks> callbacks) const {
  auto stream = std::make_shared<OpenAiStream>(settings_, request_body(request, p_.model), request.stream_text,
                                               request.max_tokens, std::move(callbacks));
  auto ticket = std::make_shared<StreamTicket>(loop_, stream);
  loop_->add(std::move(stream));
  return ticket;
}

pipe::DecodeResult OpenAiDecoder::decode(const pipe::DecodeRequest& request) const {
  auto waited = std::make_shared<WaitedCallbacks>();
  auto result = waited->promise.get_future();
  pipe::DecodeRequest plain = request;
  plain.stream_text = false;
  (void)start(plain, waited);
  return result.get();  // rethrows the DecoderError
}

}  // namespace overhead::backends
