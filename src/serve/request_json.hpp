// Reading a request body as JSON and its fields, with failures as OpenAI errors naming the field.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "serve/api_error.hpp"

namespace overhead::serve {

// Thrown by the readers below; the route turns it into the error body.
struct RequestError {
  ApiError error;
};

// The body as a JSON object (throws RequestError on bad JSON, a non-object, or nesting deeper
// than util::kMaxJsonDepth, checked on the text before anything parses or copies it).
[[nodiscard]] nlohmann::ordered_json parse_body(const std::string& body);
// The string field `name` (throws when missing or not a string).
[[nodiscard]] std::string required_string(const nlohmann::ordered_json& body, const char* name);
// The boolean field `name`, or `fallback` when absent (throws when present but not a boolean).
[[nodiscard]] bool optional_bool(const nlohmann::ordered_json& body, const char* name, bool fallback);

}  // namespace overhead::serve
