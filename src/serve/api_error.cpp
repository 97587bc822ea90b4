#include "serve/api_error.hpp"

#include <nlohmann/json.hpp>

namespace overhead::serve {

std::string error_body(const ApiError& e) {
  nlohmann::json inner = {{"message", e.message}, {"type", e.type}};
  inner["param"] = e.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.param);
  inner["code"] = e.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.code);
  return nlohmann::json{{"error", inner}}.dump();
}

}  // namespace overhead::serve
