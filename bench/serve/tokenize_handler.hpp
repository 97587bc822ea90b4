// The work both HTTP-library benchmark servers (httplib_server.cpp, beast_server.cpp) do per
// request, in one place so that the two differ only in the library: POST /v1/tokenize renders the
// chat template and encodes with the gateway's own BindingCache, and GET /ping answers a fixed
// body, so a run of it measures the library's per-request cost alone.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "serve/binding_cache.hpp"

namespace overhead::bench {

struct Reply {
  int status = 200;
  std::string body;  // application/json
};

// The fixed answer of GET /ping (text/plain).
inline constexpr std::string_view kPingBody = "pong\n";

class TokenizeHandler {
 public:
  // `models`: the tokenizer names requests may use (empty: every bundled name), as `serve --tokenizers`.
  explicit TokenizeHandler(std::vector<std::string> models);

  // {"model":..,"messages":[..]} -> {"count":N,"tokens":[..]}, or OpenAI's error body. Safe to call
  // from any number of threads at once (the cache locks; a binding is immutable).
  [[nodiscard]] Reply tokenize(const std::string& body);

 private:
  serve::BindingCache bindings_;
};

}  // namespace overhead::bench
