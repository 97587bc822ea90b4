// The places of a schema that hold subschemas, walked in place: what moving a schema into a larger
// document needs (its local `$ref`s must follow it). Only schema positions are visited, so a
// `{"$ref": ...}` object that is data (inside `enum`, `const`, `default`, `examples`) is left alone.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string_view>

namespace overhead::schema {

// Calls `visit` on each direct subschema of `schema` (no-op for a boolean schema): the values of
// properties, patternProperties, $defs, definitions, dependentSchemas and the schema values of
// dependencies; the members of allOf, anyOf, oneOf, prefixItems and an items tuple; items,
// additionalItems, additionalProperties, contains, propertyNames, not, if, then, else.
void for_each_subschema(nlohmann::json& schema, const std::function<void(nlohmann::json&)>& visit);

// Rewrites every local `$ref` in `schema` (at any depth) for the schema's move to `base` (a JSON
// pointer) of a larger document: "#/$defs/a" becomes "#<base>/$defs/a", "#" becomes "#<base>".
// `base` must need no percent-encoding (the module builds it from tool names, which cannot).
void rebase_local_refs(nlohmann::json& schema, std::string_view base);

}  // namespace overhead::schema
