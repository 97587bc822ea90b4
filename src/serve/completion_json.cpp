#include "serve/completion_json.hpp"

#include "ports/record_codec.hpp"
#include "serve/answer_shape.hpp"

namespace overhead::serve {
namespace {
using Json = nlohmann::ordered_json;
}  // namespace

nlohmann::ordered_json usage_json(const Completion& c) {
  return Json{{"prompt_tokens", c.prompt_tokens},
              {"completion_tokens", c.completion_tokens},
              {"total_tokens", c.prompt_tokens + c.completion_tokens}};
}

nlohmann::ordered_json fingerprint_json(const std::string& fingerprint) {
  return fingerprint.empty() ? Json(nullptr) : Json(fingerprint);
}

void fill_answer(Completion& c, const std::string& text, const std::string& engine_reason, const AnswerShape* shape) {
  if (shape && shape->constraint) {
    ConstrainedAnswer answer = read_constrained(*shape->constraint, text, shape->options.call_id_prefix, engine_reason);
    c.content = std::move(answer.content);
    c.calls = std::move(answer.calls);
    c.invalid_output = std::move(answer.error);
  } else {
    agent::ParsedAnswer answer = parse_answer(shape, text);
    c.content = std::move(answer.content);
    c.reasoning = std::move(answer.reasoning);
    c.calls = std::move(answer.calls);
  }
  c.finish_reason = answer_finish_reason(engine_reason, c.calls.size());
}

Completion reply_completion(const std::string& id, std::int64_t created, const std::string& model, const reply::Reply& reply,
                            const std::string& fingerprint, const AnswerShape* shape) {
  const reply::Usage usage = reply.usage();
  Completion c;
  c.id = id;
  c.created = created;
  c.model = model;
  c.prompt_tokens = usage.prompt_tokens;
  fill_answer(c, reply.text, reply.finish_reason.empty() ? "length" : reply.finish_reason, shape);
  c.completion_tokens = usage.completion_tokens;
  c.fingerprint = reply.decoder.empty() ? fingerprint : decoder_fingerprint(reply.decoder);
  return c;
}

nlohmann::ordered_json tool_call_json(const agent::ToolCall& call) {
  return Json{{"id", call.id}, {"type", "function"}, {"function", Json{{"name", call.name}, {"arguments", call.arguments}}}};
}

std::string decoder_fingerprint(const std::string& decoder_description) {
  if (decoder_description.empty() || decoder_description == "none") return kDecoderNoneFingerprint;
  return "overhead-decoder-" + decoder_description.substr(0, decoder_description.find(':'));
}

nlohmann::ordered_json completion_body(const Completion& c) {
  if (c.text_completion) {
    Json choice{{"text", c.content}, {"index", 0}, {"logprobs", nullptr}, {"finish_reason", c.finish_reason}};
    return Json{{"id", c.id},
                {"object", "text_completion"},
                {"created", c.created},
                {"model", c.model},
                {"system_fingerprint", fingerprint_json(c.fingerprint)},
                {"choices", Json::array({choice})},
                {"usage", usage_json(c)}};
  }
  // As OpenAI: content is null when the answer is tool calls and no text.
  Json message{{"role", "assistant"}, {"content", c.content.empty() && !c.calls.empty() ? Json(nullptr) : Json(c.content)}};
  if (!c.reasoning.empty()) message["reasoning_content"] = c.reasoning;
  if (!c.calls.empty()) {
    Json calls = Json::array();
    for (const auto& call : c.calls) calls.push_back(tool_call_json(call));
    message["tool_calls"] = std::move(calls);
  }
  message["refusal"] = nullptr;
  Json choice{{"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", c.finish_reason}};
  return Json{{"id", c.id},
              {"object", "chat.completion"},
              {"created", c.created},
              {"model", c.model},
              {"system_fingerprint", fingerprint_json(c.fingerprint)},
              {"choices", Json::array({choice})},
              {"usage", usage_json(c)}};
}

nlohmann::ordered_json record_json(const ports::Record& r) {
  std::string text;
  ports::append_record_json(text, r);
  return Json::parse(text);
}

}  // namespace overhead::serve
