#include "serve/api_error.hpp"

#include <nlohmann/json.hpp>

#include "util/utf8.hpp"

namespace overhead::serve {

ApiError answer_failed_error() {
  return {500, "The gateway failed to write the answer to this request", "server_error", "", "answer_failed"};
}

std::string error_body(const ApiError& e) {
  // A message may quote what came from outside (an engine's error body, a broker's error): made
  // valid here, so no error body can fail to be written (dump() throws on invalid UTF-8).
  nlohmann::json inner = {{"message", util::utf8::repair(e.message)}, {"type", e.type}};
  inner["param"] = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(util::utf8::repair(e.param));
  inner["code"] = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(util::utf8::repair(e.code));
  return nlohmann::json{{"error", inner}}.dump();
}

}  // namespace overhead::serve
