#include "backends/openai_stream.hpp"

#include <algorithm>
#include <cctype>
#include <exception>
#include <utility>

#include <nlohmann/json.hpp>

#include "backends/openai_stream_event.hpp"
#include "ports/clock.hpp"
#include "ports/errors.hpp"
#include "util/utf8.hpp"

namespace overhead::backends {

namespace {

using ports::DecoderError;
using ports::Failure;

constexpr std::size_t kMaxEventBytes = 1 << 20;  // a longer line is no completion chunk: bounded memory
constexpr std::size_t kMaxErrorBody = 4096;

// The message of a non-200 answer: error.message (OpenAI, vLLM, llama.cpp), message, detail
// (FastAPI), else the body's start. The parser validates the strings' UTF-8; the body's start is
// cut on a character boundary and repaired (an engine or a proxy may send any bytes), so the
// message can go into JSON (the client's error, the dead-letter file).
std::string error_message(const std::string& body) {
  const auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object()) {
    if (const auto e = j.find("error"); e != j.end()) {
      if (e->is_object() && e->contains("message") && (*e)["message"].is_string()) return (*e)["message"].get<std::string>();
      if (e->is_string()) return e->get<std::string>();
    }
    for (const char* k : {"message", "detail"})
      if (const auto m = j.find(k); m != j.end() && m->is_string()) return m->get<std::string>();
  }
  return util::utf8::excerpt(body, 300);
}

// An HTTP 4xx that says the request is at fault (DecoderError::engine_refused says which): not
// the engine's credentials (401, 403, 407, the operator's to fix), a timeout (408) or a throttle (429).
bool is_refusal(long status) {
  return status >= 400 && status < 500 && status != 401 && status != 403 && status != 407 && status != 408 && status != 429;
}

// Whether an engine's refusal is about the prompt's token ids (vLLM: "Token id N is out of
// vocabulary"; llama.cpp's server: "invalid token"/"out of range"), not e.g. the context length.
bool names_a_token_id(std::string_view message) {
  std::string lower(message);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool token = lower.find("token") != std::string::npos;
  return token && (lower.find("vocab") != std::string::npos || lower.find("out of range") != std::string::npos ||
                   lower.find("invalid token") != std::string::npos);
}

}  // namespace

OpenAiStream::OpenAiStream(std::shared_ptr<const OpenAiStreamSettings> settings, std::string payload, bool stream_text,
                           std::int64_t max_tokens, std::string refusal_hint, std::shared_ptr<ports::DecodeCallbacks> callbacks)
    : settings_(std::move(settings)),
      payload_(std::move(payload)),
      stream_text_(stream_text),
      refusal_hint_(std::move(refusal_hint)),
      callbacks_(std::move(callbacks)) {
  result_.output_tokens = -1;
  // Sized once so appending the answer does not reallocate per token (a few KB at most).
  result_.text.reserve(static_cast<std::size_t>(std::clamp<std::int64_t>(max_tokens, 16, 4096)) * 4);
  pending_.reserve(4096);
  event_.reserve(4096 + CompletionEventParser::kPadding);
  CURL* h = easy();
  curl_easy_setopt(h, CURLOPT_URL, settings_->url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload_.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload_.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, settings_->headers.get());
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &OpenAiStream::on_write);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 3000L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, settings_->timeout_ms);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  result_.decode_start = ports::monotonic_ns();
}

std::size_t OpenAiStream::on_write(char* data, std::size_t size, std::size_t n, void* self) {
  auto& s = *static_cast<OpenAiStream*>(self);
  const std::size_t bytes = size * n;
  if (s.cancel_requested()) return 0;  // the loop removes it on its next turn
  if (s.status_ == 0) curl_easy_getinfo(s.easy(), CURLINFO_RESPONSE_CODE, &s.status_);
  if (s.status_ != 200) {
    if (s.error_body_.size() < kMaxErrorBody)
      s.error_body_.append(data, std::min(bytes, kMaxErrorBody - s.error_body_.size()));
    return bytes;
  }
  // An exception must not unwind through libcurl's C frames: a receiver that throws (on_text) ends
  // its generation with an error instead.
  try {
    return s.feed(data, bytes) ? bytes : 0;
  } catch (const std::exception& e) {
    s.protocol_error_ = std::string("the receiver of the text failed: ") + e.what();
    return 0;
  }
}

bool OpenAiStream::feed(const char* data, std::size_t size) {
  pending_.append(data, size);
  std::size_t start = 0;
  for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
    if (!on_line(std::string_view(pending_).substr(start, nl - start))) return false;
  pending_.erase(0, start);
  if (pending_.size() > kMaxEventBytes) {
    protocol_error_ = "not an OpenAI stream: a line is over " + std::to_string(kMaxEventBytes) + " bytes";
    return false;
  }
  return true;
}

bool OpenAiStream::on_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line.front() == ':') return true;  // an event's end, a comment (": ping")
  if (line.starts_with("data:")) {
    line.remove_prefix(5);
    if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    return on_data(line);
  }
  if (line.starts_with("event:") || line.starts_with("id:") || line.starts_with("retry:")) return true;
  protocol_error_ = "not an OpenAI stream (a line is no server-sent event): " + util::utf8::excerpt(line, 200);
  return false;
}

bool OpenAiStream::on_data(std::string_view data) {
  if (data == "[DONE]") {
    done_ = true;
    result_.decode_end = ports::monotonic_ns();
    return true;
  }
  // One parser per loop thread: every stream's events are read on it, one at a time.
  thread_local CompletionEventParser parser;
  thread_local std::string why;
  event_.assign(data);
  if (event_.capacity() < event_.size() + CompletionEventParser::kPadding)
    event_.reserve(event_.size() + CompletionEventParser::kPadding);
  CompletionEvent ev;
  if (!parser.parse(event_.data(), event_.size(), event_.capacity(), ev, why)) {
    protocol_error_ = "not an OpenAI stream (" + why + "): " + util::utf8::excerpt(data, 200);
    return false;
  }
  if (ev.has_error) {
    protocol_error_ = "the server sent an error in the stream: " +
                      (ev.error_message.empty() ? util::utf8::excerpt(data, 300) : util::utf8::repair(ev.error_message));
    return false;
  }
  if (!ev.text.empty()) {
    if (result_.first_token == 0) result_.first_token = ports::monotonic_ns();
    result_.text.append(ev.text);
  }
  if (settings_->token_ids && ev.token_ids && !ev.token_ids->empty()) {
    if (result_.first_token == 0) result_.first_token = ports::monotonic_ns();
    ids_seen_ += ev.token_ids->size();
    callbacks_->on_token_ids(*ev.token_ids);
  }
  if (!ev.finish_reason.empty()) result_.finish_reason.assign(ev.finish_reason);
  if (ev.prompt_tokens >= 0) result_.engine_prompt_tokens = ev.prompt_tokens;
  if (ev.completion_tokens >= 0) {
    result_.output_tokens = ev.completion_tokens;
    usage_seen_ = true;
  }
  // Whole characters by construction: the parser validates each event's UTF-8 and its escapes
  // (a surrogate pair is one character), so an event's text never ends inside a character.
  if (stream_text_ && !settings_->token_ids && !ev.text.empty()) callbacks_->on_text(ev.text, usage_seen_ ? result_.output_tokens : -1);
  return true;
}

void OpenAiStream::fail(const std::string& what, Failure failure) {
  callbacks_->on_error(DecoderError("openai decoder: POST " + settings_->shown_url + ": " + what, failure));
}

void OpenAiStream::on_finished(CURLcode rc) {
  if (status_ == 0) curl_easy_getinfo(easy(), CURLINFO_RESPONSE_CODE, &status_);
  if (cancel_requested()) return on_cancelled();  // the write callback stopped it first
  // A last line without its newline (e.g. a plain JSON answer from a server that ignored stream).
  if (rc == CURLE_OK && status_ == 200 && protocol_error_.empty() && !pending_.empty()) (void)on_line(pending_);
  if (!protocol_error_.empty()) return fail(protocol_error_, Failure::permanent);
  // No HTTP answer: refused, unreachable, timed out, dropped. The server may be back soon.
  if (rc != CURLE_OK && status_ == 0) return fail(curl_easy_strerror(rc), Failure::transient);
  if (status_ != 200) {
    const std::string what = "HTTP " + std::to_string(status_) + ": " + error_message(error_body_);
    if (is_refusal(status_)) {
      const std::string said = refusal_hint_.empty() || !names_a_token_id(what) ? what : refusal_hint_ + " (" + what + ")";
      return callbacks_->on_error(DecoderError::engine_refused("openai decoder: POST " + settings_->shown_url + ": " + said, said));
    }
    const bool transient = status_ == 429 || status_ >= 500;
    return fail(what, transient ? Failure::transient : Failure::permanent);
  }
  if (rc != CURLE_OK) return fail(std::string("stream cut: ") + curl_easy_strerror(rc), Failure::transient);
  if (!done_) return fail("the stream ended without data: [DONE]", Failure::transient);
  if (settings_->token_ids && ids_seen_ == 0 && !result_.text.empty())
    return fail("the stream had text and no token ids (output=ids asks for choices[].token_ids, vLLM's return_token_ids; "
                "this engine does not send them: use output=text)",
                Failure::permanent);
  if (settings_->usage_required && !usage_seen_)
    return fail("the stream had no usage (the server ignores stream_options.include_usage)", Failure::permanent);
  callbacks_->on_done(std::move(result_));
}

void OpenAiStream::on_cancelled() {
  result_.cancelled = true;
  result_.finish_reason = "cancelled";
  result_.decode_end = ports::monotonic_ns();
  callbacks_->on_done(std::move(result_));
}

void OpenAiStream::on_closed() {
  fail("the decoder was closed while the generation ran", Failure::transient);
}

}  // namespace overhead::backends
