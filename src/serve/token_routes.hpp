// The routes that need only the tokenizer and its chat template: /v1/tokenize, /v1/detokenize
// (vLLM's shapes), /v1/render (the chat template alone) and /v1/models.
#pragma once

#include <cstddef>

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class BindingCache;

struct RouteLimits {
  std::size_t max_messages = 1024;
};

void add_token_routes(http::Routes& routes, BindingCache& bindings, const RouteLimits& limits);

}  // namespace overhead::serve
