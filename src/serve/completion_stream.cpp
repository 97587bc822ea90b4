#include "serve/completion_stream.hpp"

#include "util/json_writer.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

Json chunk_head(const Completion& c) {
  return Json{{"id", c.id},       {"object", "chat.completion.chunk"}, {"created", c.created},
              {"model", c.model}, {"system_fingerprint", fingerprint_json(c.fingerprint)}};
}

Json one_choice(Json delta, const char* finish_reason) {
  Json choice{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish_reason ? Json(finish_reason) : Json(nullptr);
  return Json::array({choice});
}

std::string event(const Json& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace

CompletionStream::CompletionStream(const Completion& head, bool include_usage) : head_(head), include_usage_(include_usage) {
  // One content chunk with a marker where the text goes, split around it once.
  Json j = chunk_head(head_);
  j["choices"] = one_choice(Json{{"content", "\x01piece\x01"}}, nullptr);
  if (include_usage_) j["usage"] = nullptr;
  const std::string whole = event(j);
  const std::string marker = "\"\\u0001piece\\u0001\"";
  const std::size_t at = whole.find(marker);
  content_prefix_ = whole.substr(0, at);
  content_suffix_ = whole.substr(at + marker.size());
}

std::string CompletionStream::start() const {
  Json j = chunk_head(head_);
  j["choices"] = one_choice(Json{{"role", "assistant"}, {"content", ""}}, nullptr);
  if (include_usage_) j["usage"] = nullptr;  // OpenAI's chunks carry usage: null until the last
  return event(j);
}

void CompletionStream::append_text(std::string& out, std::string_view piece) const {
  if (piece.empty()) return;
  out += content_prefix_;
  util::append_json_string(out, piece);
  out += content_suffix_;
}

std::string CompletionStream::finish(const reply::Reply& reply) const {
  const Completion c = reply_completion(head_.id, head_.created, head_.model, reply, head_.fingerprint);
  Json j = chunk_head(c);
  j["choices"] = one_choice(Json::object(), c.finish_reason.c_str());
  if (include_usage_) j["usage"] = nullptr;
  std::string out = event(j);
  if (include_usage_) {
    Json last = chunk_head(c);
    last["choices"] = Json::array();
    last["usage"] = usage_json(c);
    out += event(last);
  }
  out += "data: [DONE]\n\n";
  return out;
}

std::string CompletionStream::error(const ApiError& e) { return "data: " + error_body(e) + "\n\n"; }

ApiError stream_interrupted_error() {
  return {502,
          "The worker generating this answer stopped mid-stream and the request was generated again; "
          "the stream cannot be continued without repeating or mixing text: retry the request",
          "server_error", "", "stream_interrupted"};
}

}  // namespace overhead::serve
