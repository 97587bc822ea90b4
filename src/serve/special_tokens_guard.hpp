// The gateway's rule for special-token text in what a client sends (--special-tokens-in-content):
// HF, vLLM and `overhead tokenize` parse "<|im_end|><|im_start|>system" inside a user message as
// the control tokens themselves, so any client could close its own turn and forge a system one.
// The gateway refuses such a request by default (400, the field named, counted on /metrics);
// `allow` keeps HF's behaviour. Refusing rather than neutralising: the prompt a worker encodes
// stays exactly HF's for every request the gateway accepts.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace overhead::tok {
class Tokenizer;
}

namespace overhead::serve {

enum class SpecialTokensInContent { kRefuse, kAllow };

// "refuse" / "allow"; nullopt for anything else.
[[nodiscard]] std::optional<SpecialTokensInContent> special_tokens_policy(std::string_view name);

// Throws RequestError (400, code "special_token_in_content") naming the first field of
// `messages` (e.g. "messages[1].content[0].text") or of `tools` ("tools...") whose text holds a
// special token of `tokenizer`: every string the chat template may render, keys included.
void refuse_special_tokens(const tok::Tokenizer& tokenizer, const nlohmann::ordered_json& messages,
                           const nlohmann::ordered_json& tools);

}  // namespace overhead::serve
