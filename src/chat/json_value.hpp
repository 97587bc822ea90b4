// Turning the caller's JSON into engine values, once. Strings are borrowed, not copied: the JSON
// must outlive every render that uses the result. A pipeline converts each record once and renders
// from the Value, so no render pays for the conversion again.
#pragma once

#include <nlohmann/json.hpp>

#include "chat/value.hpp"

namespace overhead::chat {

// Throws EvalError for input nested more than 256 levels deep. Objects keep the JSON's key order
// (nlohmann::json sorts keys; ordered_json keeps them as written, as Python does).
Value value_from_json(const nlohmann::json& j);
Value value_from_json(const nlohmann::ordered_json& j);

}  // namespace overhead::chat
