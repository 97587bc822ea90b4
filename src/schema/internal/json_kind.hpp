// How an error message names the kind of a JSON value ("a string", "an integer", "an object"),
// the same in every message of the module.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace overhead::schema::internal {

inline std::string json_kind(const nlohmann::json& v) {
  if (v.is_number_integer()) return "an integer";
  const std::string t = v.type_name();
  return (t == "array" || t == "object" ? "an " : "a ") + t;
}

}  // namespace overhead::schema::internal
