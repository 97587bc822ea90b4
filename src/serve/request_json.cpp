#include "serve/request_json.hpp"

#include "util/json_depth.hpp"

namespace overhead::serve {

nlohmann::ordered_json parse_body(const std::string& body) {
  // Before the parse: the JSON library copies, compares and prints values recursively, so a body
  // nested 200,000 deep would overflow the stack of whichever of them first touched it.
  if (util::json_too_deep(body))
    throw RequestError{{400, "The request body nests arrays and objects more than " + std::to_string(util::kMaxJsonDepth) + " levels deep",
                        "invalid_request_error", "", "nested_too_deep"}};
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw RequestError{{400, "The request body is not valid JSON", "invalid_request_error", "", "invalid_json"}};
  if (!j.is_object()) throw RequestError{{400, "The request body must be a JSON object", "invalid_request_error", "", "invalid_json"}};
  return j;
}

std::string required_string(const nlohmann::ordered_json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end())
    throw RequestError{{400, std::string("Missing required parameter: '") + name + "'", "invalid_request_error", name, "missing_required_parameter"}};
  if (!it->is_string())
    throw RequestError{{400, std::string("'") + name + "' must be a string", "invalid_request_error", name, "invalid_type"}};
  return it->get<std::string>();
}

bool optional_bool(const nlohmann::ordered_json& body, const char* name, bool fallback) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean())
    throw RequestError{{400, std::string("'") + name + "' must be a boolean", "invalid_request_error", name, "invalid_type"}};
  return it->get<bool>();
}

}  // namespace overhead::serve
