#include "serve/completion_stream.hpp"

#include "serve/answer_shape.hpp"
#include "util/json_writer.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

Json chunk_head(const Completion& c) {
  return Json{{"id", c.id},       {"object", c.text_completion ? "text_completion" : "chat.completion.chunk"}, {"created", c.created},
              {"model", c.model}, {"system_fingerprint", fingerprint_json(c.fingerprint)}};
}

Json one_choice(Json delta, const char* finish_reason) {
  Json choice{{"index", 0}, {"delta", std::move(delta)}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish_reason ? Json(finish_reason) : Json(nullptr);
  return Json::array({choice});
}

// A text completion's choice: the piece itself as `text` (no delta object).
Json one_text_choice(Json text, const char* finish_reason) {
  Json choice{{"text", std::move(text)}, {"index", 0}, {"logprobs", nullptr}};
  choice["finish_reason"] = finish_reason ? Json(finish_reason) : Json(nullptr);
  return Json::array({choice});
}

std::string event(const Json& j) { return "data: " + j.dump() + "\n\n"; }

}  // namespace

CompletionStream::CompletionStream(const Completion& head, bool include_usage, std::shared_ptr<const AnswerShape> shape)
    : head_(head), include_usage_(include_usage), shape_(std::move(shape)) {
  // One text chunk with a marker where the text goes, split around it once, per kind of text.
  const auto split = [&](const char* key, std::string& prefix, std::string& suffix) {
    Json j = chunk_head(head_);
    j["choices"] = head_.text_completion ? one_text_choice("\x01piece\x01", nullptr) : one_choice(Json{{key, "\x01piece\x01"}}, nullptr);
    if (include_usage_) j["usage"] = nullptr;
    const std::string whole = event(j);
    const std::string marker = "\"\\u0001piece\\u0001\"";
    const std::size_t at = whole.find(marker);
    prefix = whole.substr(0, at);
    suffix = whole.substr(at + marker.size());
  };
  split("content", content_prefix_, content_suffix_);
  if (shape_ && !shape_->constraint) {
    split("reasoning_content", reasoning_prefix_, reasoning_suffix_);
    parser_ = std::make_unique<agent::AnswerParser>(shape_->options);
  }
}

std::string CompletionStream::start() const {
  if (head_.text_completion) return {};  // a text completion's stream has no role event
  Json j = chunk_head(head_);
  j["choices"] = one_choice(Json{{"role", "assistant"}, {"content", ""}}, nullptr);
  if (include_usage_) j["usage"] = nullptr;  // OpenAI's chunks carry usage: null until the last
  return event(j);
}

void CompletionStream::append_event(std::string& out, const std::string& prefix, const std::string& suffix, std::string_view text) {
  if (text.empty()) return;
  out += prefix;
  util::append_json_string(out, text);
  out += suffix;
}

void CompletionStream::append_text(std::string& out, std::string_view piece) {
  if (shape_ && shape_->constraint) {
    constrained_text_ += piece;
    if (shape_->constraint->makes_tool_calls()) return;  // calls, sent whole at the end
  }
  if (!parser_) return append_event(out, content_prefix_, content_suffix_, piece);
  if (piece.empty()) return;
  deltas_.clear();
  parser_->push(piece, deltas_);
  append_deltas(out, deltas_);
}

void CompletionStream::append_deltas(std::string& out, const std::vector<agent::Delta>& deltas) {
  for (const agent::Delta& d : deltas) {
    switch (d.kind) {
      case agent::Delta::Kind::content:
        append_event(out, content_prefix_, content_suffix_, d.text);
        break;
      case agent::Delta::Kind::reasoning:
        append_event(out, reasoning_prefix_, reasoning_suffix_, d.text);
        break;
      case agent::Delta::Kind::tool_call: {
        // parallel_tool_calls false: the calls after the first are not sent (nor in the whole answer).
        if (shape_->first_call_only && d.index > 0) break;
        Json call{{"index", d.index}};
        if (!d.id.empty()) {
          call["id"] = d.id;
          call["type"] = "function";
          call["function"] = Json{{"name", d.name}, {"arguments", d.text}};
          ++calls_sent_;
        } else {
          call["function"] = Json{{"arguments", d.text}};
        }
        Json j = chunk_head(head_);
        j["choices"] = one_choice(Json{{"tool_calls", Json::array({std::move(call)})}}, nullptr);
        if (include_usage_) j["usage"] = nullptr;
        out += event(j);
        break;
      }
    }
  }
}

std::string CompletionStream::finish(const reply::Reply& reply) {
  std::string out;
  if (parser_) {
    deltas_.clear();
    parser_->finish(deltas_);
    append_deltas(out, deltas_);
  }
  Completion c = reply_completion(head_.id, head_.created, head_.model, reply, head_.fingerprint);
  c.text_completion = head_.text_completion;
  if (shape_ && shape_->constraint) {
    // The reply's text is the whole answer when it came whole; else the pieces streamed here.
    const std::string& text = constrained_text_.empty() ? reply.text : constrained_text_;
    ConstrainedAnswer answer = read_constrained(*shape_->constraint, text, shape_->options.call_id_prefix, c.finish_reason);
    if (answer.error) return out + error(*answer.error);
    if (constrained_text_.empty() && !shape_->constraint->makes_tool_calls())
      append_event(out, content_prefix_, content_suffix_, answer.content);
    std::vector<agent::Delta> calls;
    for (std::size_t i = 0; i < answer.calls.size(); ++i) {
      agent::Delta d;
      d.kind = agent::Delta::Kind::tool_call;
      d.index = i;
      d.id = answer.calls[i].id;
      d.name = answer.calls[i].name;
      d.text = answer.calls[i].arguments;
      calls.push_back(std::move(d));
    }
    append_deltas(out, calls);
  }
  c.finish_reason = answer_finish_reason(c.finish_reason, calls_sent_);
  Json j = chunk_head(c);
  j["choices"] = c.text_completion ? one_text_choice("", c.finish_reason.c_str()) : one_choice(Json::object(), c.finish_reason.c_str());
  if (include_usage_) j["usage"] = nullptr;
  out += event(j);
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
