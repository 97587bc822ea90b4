#include "serve/completion_json.hpp"

#include "ports/record_codec.hpp"

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

Completion reply_completion(const std::string& id, std::int64_t created, const std::string& model, const reply::Reply& reply,
                            const std::string& fingerprint) {
  const reply::Usage usage = reply.usage();
  return Completion{id,   created, model, usage.prompt_tokens, reply.text, usage.completion_tokens,
                    reply.finish_reason.empty() ? "length" : reply.finish_reason,
                    reply.decoder.empty() ? fingerprint : decoder_fingerprint(reply.decoder)};
}

std::string decoder_fingerprint(const std::string& decoder_description) {
  if (decoder_description.empty() || decoder_description == "none") return kDecoderNoneFingerprint;
  return "overhead-decoder-" + decoder_description.substr(0, decoder_description.find(':'));
}

nlohmann::ordered_json completion_body(const Completion& c) {
  Json message{{"role", "assistant"}, {"content", c.content}, {"refusal", nullptr}};
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
