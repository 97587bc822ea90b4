// The routes that need only the tokenizer and its chat template: /v1/tokenize, /v1/detokenize
// (vLLM's shapes), /v1/render (the chat template alone) and /v1/models.
#pragma once

#include <cstddef>

namespace httplib {
class Server;
}

namespace overhead::serve {

class BindingCache;

struct RouteLimits {
  std::size_t max_messages = 1024;
};

void add_token_routes(httplib::Server& http, BindingCache& bindings, const RouteLimits& limits);

}  // namespace overhead::serve
