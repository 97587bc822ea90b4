// A request's `response_format`, checked before anything is queued, and what it asks of the
// answer: the schema to constrain the engine with and the compiled schema the final text is
// validated against at the front. Errors are SchemaErrors naming the field
// (`response_format.json_schema.schema/properties/a/$ref: remote references are not supported`).
//
//   {"type": "text"}                        no constraint (the default)
//   {"type": "json_object"}                 any JSON object: the constraint {"type": "object"}
//   {"type": "json_schema",
//    "json_schema": {"name": "answer",      required, ^[a-zA-Z0-9_-]{1,64}$ as OpenAI has it
//                    "schema": {...},       the constraint (an object schema or a boolean); absent: {}
//                    "strict": true,        recorded; the schema is enforced the same either way
//                    "description": "..."}}
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "schema/compiled_schema.hpp"

namespace overhead::schema {

struct ResponseFormat {
  enum class Kind { kText, kJsonObject, kJsonSchema };
  Kind kind = Kind::kText;
  std::string name;         // kJsonSchema: json_schema.name
  std::string description;  // kJsonSchema: json_schema.description, "" when absent
  bool strict = false;      // kJsonSchema: json_schema.strict
  // The constraint to send to the engine: null for text, {"type": "object"} for json_object, the
  // client's schema for json_schema.
  nlohmann::json schema;
  // The constraint compiled, to validate the final answer (validate_text); nullopt for text.
  std::optional<CompiledSchema> compiled;

  bool constrained() const { return kind != Kind::kText; }
};

// Reads `response_format` (nullptr when the request has none: text). `field` names it in errors.
[[nodiscard]] ResponseFormat check_response_format(const nlohmann::json* response_format,
                                                   std::string_view field = "response_format");

}  // namespace overhead::schema
