#include "serve/special_tokens_guard.hpp"

#include "serve/request_json.hpp"
#include "tok/tokenizer.hpp"
#include "util/utf8.hpp"

namespace overhead::serve {

std::optional<SpecialTokensInContent> special_tokens_policy(std::string_view name) {
  if (name == "refuse") return SpecialTokensInContent::kRefuse;
  if (name == "allow") return SpecialTokensInContent::kAllow;
  return std::nullopt;
}

namespace {

[[noreturn]] void refuse(const tok::Tokenizer& tokenizer, tok::TokenId id, const std::string& path) {
  // The token's own text, repaired: a tokenizer.json is outside data and the body must be JSON.
  const std::string token = util::utf8::repair(tokenizer.id_to_token(id).value_or("?"));
  throw RequestError{{400,
                      path + " holds the special token " + token +
                          ", which would be read as a control token of the prompt; special-token text in messages is refused "
                          "(the gateway's --special-tokens-in-content)",
                      "invalid_request_error", path, "special_token_in_content"}};
}

// Every string of `v` (keys too: a template may render an object's keys), depth-first. The body
// was parsed with a nesting limit (request_json.hpp), so the recursion is bounded.
void check(const tok::Tokenizer& tokenizer, const nlohmann::ordered_json& v, std::string& path) {
  if (v.is_string()) {
    if (const auto id = tokenizer.find_special(v.get_ref<const std::string&>())) refuse(tokenizer, *id, path);
    return;
  }
  const std::size_t length = path.size();
  if (v.is_array()) {
    std::size_t i = 0;
    for (const auto& item : v) {
      path += "[" + std::to_string(i++) + "]";
      check(tokenizer, item, path);
      path.resize(length);
    }
  } else if (v.is_object()) {
    for (const auto& [key, item] : v.items()) {
      path += "." + key;
      if (const auto id = tokenizer.find_special(key)) refuse(tokenizer, *id, util::utf8::repair(path));
      check(tokenizer, item, path);
      path.resize(length);
    }
  }
}

}  // namespace

void refuse_special_tokens(const tok::Tokenizer& tokenizer, const nlohmann::ordered_json& messages,
                           const nlohmann::ordered_json& tools) {
  std::string path = "messages";
  check(tokenizer, messages, path);
  path = "tools";
  check(tokenizer, tools, path);
}

}  // namespace overhead::serve
