// The places of a schema that hold subschemas, walked in place: what moving a schema into a larger
// document needs (its local `$ref`s must follow it). Only schema positions are visited, so a
// `{"$ref": ...}` object that is data (inside `enum`, `const`, `default`, `examples`) is left alone.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace overhead::schema {

// Calls `visit` on each direct subschema of `schema` (no-op for a boolean schema): the values of
// properties, patternProperties, $defs, definitions, dependentSchemas and the schema values of
// dependencies; the members of allOf, anyOf, oneOf, prefixItems and an items tuple; items,
// additionalItems, additionalProperties, contains, propertyNames, not, if, then, else.
void for_each_subschema(nlohmann::json& schema, const std::function<void(nlohmann::json&)>& visit);

// Calls `visit` on the text of every `$ref` in `schema` and its subschemas, at any depth, which
// it may rewrite.
void for_each_ref(nlohmann::json& schema, const std::function<void(std::string&)>& visit);

// The `$ref` text of a pointer given as segments: "#/" joined, each segment escaped (~0, ~1) and
// then percent-encoded where a URI fragment needs it ("#/$defs/a~1b", "#/$defs/50%25").
std::string ref_to(const std::vector<std::string>& segments);

}  // namespace overhead::schema
