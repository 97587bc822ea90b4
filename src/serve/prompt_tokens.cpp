#include "serve/prompt_tokens.hpp"

#include <string>

#include "binding/chat_binding.hpp"
#include "chat/chat_template.hpp"
#include "serve/chat_request.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {

std::int64_t count_prompt_tokens(const binding::ChatBinding& binding, const ChatRequest& request) {
  // A completion's text, with the special tokens the worker adds to it (chat_token_processor.cpp).
  if (request.prompt_text) return static_cast<std::int64_t>(binding.tokenizer().count(*request.prompt_text, true));
  chat::RenderOptions options;
  options.add_generation_prompt = true;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  for (auto it = request.template_kwargs.begin(); it != request.template_kwargs.end(); ++it)
    if (it.key() != "tools") extra[it.key()] = it.value();
  if (!request.tools.is_null()) extra["tools"] = request.tools;
  // The messages as the worker gets them: every one with a content (null when left out).
  nlohmann::ordered_json messages = request.messages;
  for (auto& m : messages)
    if (!m.contains("content")) m["content"] = nullptr;
  std::string text;
  try {
    text = binding.chat_template().render(messages, options, extra);
  } catch (const chat::TemplateError& e) {
    throw RequestError{{400, std::string("The chat template rejected the messages: ") + e.what(), "invalid_request_error",
                        "messages", "template_error"}};
  }
  return static_cast<std::int64_t>(binding.tokenizer().count(text, false));
}

}  // namespace overhead::serve
