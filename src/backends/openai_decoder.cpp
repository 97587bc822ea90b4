#include "backends/openai_decoder.hpp"

#include <charconv>
#include <stdexcept>

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include "pipe/clock.hpp"
#include "pipe/errors.hpp"

namespace overhead::backends {

namespace {

using pipe::DecoderError;
using pipe::Failure;

void global_init() {
  // curl_global_init is not thread-safe; once, before the first handle (as aws/http_client does).
  static const bool ok = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  if (!ok) throw DecoderError("openai decoder: curl_global_init failed", Failure::permanent);
}

// One handle per thread, reused: its connection stays open for the thread's next item.
struct Handle {
  CURL* h = nullptr;
  Handle() : h(curl_easy_init()) {}
  ~Handle() {
    if (h) curl_easy_cleanup(h);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

// The state of one streamed answer, filled by the write callback as bytes arrive.
struct Stream {
  CURL* h = nullptr;
  long status = 0;
  std::string pending;     // bytes after the last complete line
  std::string error_body;  // a non-200 answer's body (the first 4 KB)
  pipe::DecodeResult* result = nullptr;
  bool done = false;
  std::string protocol_error;  // set when a data line is no OpenAI chunk
};

void on_data_line(Stream& s, std::string_view data) {
  if (data == "[DONE]") {
    s.result->decode_end = pipe::monotonic_ns();
    s.done = true;
    return;
  }
  const auto j = nlohmann::json::parse(data, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    s.protocol_error = "a data line is not JSON: " + std::string(data.substr(0, 200));
    return;
  }
  if (const auto e = j.find("error"); e != j.end() && !e->is_null()) {
    s.protocol_error = "the server sent an error in the stream: " + e->dump();
    return;
  }
  if (const auto c = j.find("choices"); c != j.end() && c->is_array() && !c->empty()) {
    const auto& choice = (*c)[0];
    if (const auto t = choice.find("text"); t != choice.end() && t->is_string() && !t->get_ref<const std::string&>().empty()) {
      if (s.result->first_token == 0) s.result->first_token = pipe::monotonic_ns();
      s.result->text += t->get_ref<const std::string&>();
    }
    if (const auto f = choice.find("finish_reason"); f != choice.end() && f->is_string())
      s.result->finish_reason = f->get<std::string>();
  }
  if (const auto u = j.find("usage"); u != j.end() && u->is_object())
    if (const auto n = u->find("completion_tokens"); n != u->end() && n->is_number_integer())
      s.result->output_tokens = n->get<std::int64_t>();
}

std::size_t on_write(char* data, std::size_t size, std::size_t n, void* user) {
  auto& s = *static_cast<Stream*>(user);
  const std::size_t bytes = size * n;
  if (s.status == 0) curl_easy_getinfo(s.h, CURLINFO_RESPONSE_CODE, &s.status);
  if (s.status != 200) {
    if (s.error_body.size() < 4096) s.error_body.append(data, std::min(bytes, 4096 - s.error_body.size()));
    return bytes;
  }
  s.pending.append(data, bytes);
  std::size_t start = 0;
  for (std::size_t nl; (nl = s.pending.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(s.pending.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.starts_with("data:")) continue;  // blank separators, comments (": ping"), event names
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    on_data_line(s, line);
    if (!s.protocol_error.empty()) return 0;  // stop the transfer
  }
  s.pending.erase(0, start);
  return bytes;
}

}  // namespace

OpenAiDecoderParams parse_openai_decoder(std::string_view text) {
  const std::string form = "expected openai:URL[,model=NAME][,timeout_ms=MS], URL e.g. http://127.0.0.1:8000/v1";
  OpenAiDecoderParams p;
  const std::size_t comma = text.find(',');
  std::string_view url = text.substr(0, comma);
  if (!url.starts_with("http://") && !url.starts_with("https://"))
    throw std::invalid_argument("openai: '" + std::string(url) + "' is not an http:// or https:// URL (" + form + ")");
  if (url.find_first_of(" \t\r\n") != std::string_view::npos || url.size() <= url.find("//") + 2)
    throw std::invalid_argument("openai: '" + std::string(url) + "' is not a URL (" + form + ")");
  while (url.ends_with('/')) url.remove_suffix(1);
  p.base_url = std::string(url);
  bool have_model = false, have_timeout = false;
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
    } else {
      throw std::invalid_argument("openai: unknown parameter '" + std::string(key) + "' (" + form + ")");
    }
  }
  return p;
}

OpenAiDecoder::OpenAiDecoder(OpenAiDecoderParams p) : p_(std::move(p)) { global_init(); }

std::string OpenAiDecoder::describe() const {
  return "openai:" + p_.base_url + (p_.model.empty() ? "" : ",model=" + p_.model);
}

pipe::DecodeResult OpenAiDecoder::decode(const pipe::DecodeRequest& request) const {
  thread_local Handle handle;
  if (!handle.h) throw DecoderError("openai decoder: curl_easy_init failed", Failure::transient);
  CURL* h = handle.h;
  curl_easy_reset(h);  // keeps the connection cache

  nlohmann::json body = {{"model", p_.model.empty() ? std::string(request.tokenizer) : p_.model},
                         {"prompt", std::string(request.prompt)},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}}};
  if (request.max_tokens > 0) body["max_tokens"] = request.max_tokens;
  const std::string payload = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string url = p_.base_url + "/completions";

  pipe::DecodeResult result;
  result.output_tokens = -1;
  Stream s;
  s.h = h;
  s.result = &result;
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Accept: text/event-stream");
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(p_.timeout.count()));
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);

  result.decode_start = pipe::monotonic_ns();
  const CURLcode rc = curl_easy_perform(h);
  curl_slist_free_all(headers);
  if (s.status == 0) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &s.status);

  const std::string where = "openai decoder: POST " + url;
  if (!s.protocol_error.empty()) throw DecoderError(where + ": " + s.protocol_error, Failure::permanent);
  if (rc != CURLE_OK && s.status == 0) {
    // No HTTP answer: refused, unreachable, timed out, dropped. The server may be back soon.
    throw DecoderError(where + ": " + curl_easy_strerror(rc), Failure::transient);
  }
  if (s.status != 200) {
    const bool transient = s.status == 429 || s.status >= 500;
    throw DecoderError(where + ": HTTP " + std::to_string(s.status) + ": " + s.error_body.substr(0, 300),
                       transient ? Failure::transient : Failure::permanent);
  }
  if (rc != CURLE_OK) throw DecoderError(where + ": stream cut: " + curl_easy_strerror(rc), Failure::transient);
  if (!s.done) throw DecoderError(where + ": the stream ended without data: [DONE]", Failure::transient);
  return result;
}

}  // namespace overhead::backends
