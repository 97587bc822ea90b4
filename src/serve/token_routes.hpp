// The routes that need only the tokenizer and its chat template: /v1/tokenize, /v1/detokenize
// (vLLM's shapes), /v1/render (the chat template alone) and /v1/models.
#pragma once

#include <cstddef>

#include <nlohmann/json.hpp>

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class BindingCache;

struct RouteLimits {
  std::size_t max_messages = 1024;
};

void add_token_routes(http::Routes& routes, BindingCache& bindings, const RouteLimits& limits);

// Each route's work on a parsed body (serve/request_json.hpp parse_body), without HTTP: the answer,
// or a RequestError naming the field. The routes above call them; so does the request fuzzer.
[[nodiscard]] nlohmann::ordered_json tokenize_response(BindingCache& bindings, const RouteLimits& limits,
                                                       const nlohmann::ordered_json& body);
[[nodiscard]] nlohmann::ordered_json detokenize_response(BindingCache& bindings, const nlohmann::ordered_json& body);
[[nodiscard]] nlohmann::ordered_json render_response(BindingCache& bindings, const RouteLimits& limits,
                                                     const nlohmann::ordered_json& body);

}  // namespace overhead::serve
