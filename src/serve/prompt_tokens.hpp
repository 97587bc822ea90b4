// A chat request's prompt tokens at admission: the prompt rendered as the engine reads it (the
// model's chat template with its generation prompt, the request's tools and
// chat_template_kwargs) and counted with the model's tokenizer, the template's special tokens
// included and nothing added (what the worker sends as ids, tokenize once). Exact, where a gateway
// that does not own the tokenizer can only estimate; used for the tokens-per-minute limit, so it
// runs only for keys that have one.
#pragma once

#include <cstdint>

namespace overhead::binding {
class ChatBinding;
}

namespace overhead::serve {

struct ChatRequest;

// Throws RequestError (400 template_error) when the template rejects the messages.
[[nodiscard]] std::int64_t count_prompt_tokens(const binding::ChatBinding& binding, const ChatRequest& request);

}  // namespace overhead::serve
