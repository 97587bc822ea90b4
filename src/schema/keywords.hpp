// What this module does with each JSON Schema keyword, as data: the compiler refuses by this table,
// and the tests and docs/structured-outputs.md read it (a test checks that the JSON Schema Test
// Suite files skipped are exactly those of keywords not enforced here).
//
// Three kinds, and a fourth by omission:
//   - enforced: validation checks it (kEnforcedKeywords);
//   - annotation: accepted and ignored, as the specification allows (kAnnotationKeywords); `format`
//     is one: "date-time", "email", ... are not checked;
//   - refused: changes what validates but is not implemented, so compile() throws naming the place
//     rather than let a schema pass for stricter than it is checked (kRefusedKeywords);
//   - any other keyword is unknown to JSON Schema and ignored, as the specification says.
// `$ref` is enforced for local JSON pointers only (`#`, `#/$defs/a`, `#/definitions/a`,
// `#/properties/x/items`); a remote reference or an anchor (`#name`) is refused.
#pragma once

#include <string_view>

namespace overhead::schema {

inline constexpr std::string_view kEnforcedKeywords[] = {
    "type",          "enum",          "const",         "minimum",       "maximum",           "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minLength",     "maxLength",     "pattern",           "items",
    "prefixItems",   "additionalItems", "minItems",    "maxItems",      "uniqueItems",       "contains",
    "minContains",   "maxContains",   "properties",    "patternProperties", "additionalProperties", "required",
    "minProperties", "maxProperties", "dependencies",  "dependentRequired", "dependentSchemas", "propertyNames",
    "allOf",         "anyOf",         "oneOf",         "not",           "if",                "then",
    "else",          "$ref",          "$defs",         "definitions"};

inline constexpr std::string_view kAnnotationKeywords[] = {
    "title",    "description", "default",          "examples",        "$schema",       "$id",
    "$comment", "readOnly",    "writeOnly",        "deprecated",      "$anchor",       "$vocabulary",
    "format",   "contentMediaType", "contentEncoding", "contentSchema"};

struct RefusedKeyword {
  std::string_view keyword;
  std::string_view reason;  // the client's error message
};
inline constexpr RefusedKeyword kRefusedKeywords[] = {
    {"$dynamicRef", "dynamic references ($dynamicRef) are not supported"},
    {"$dynamicAnchor", "dynamic anchors ($dynamicAnchor) are not supported"},
    {"$recursiveRef", "recursive references ($recursiveRef) are not supported: use $ref"},
    {"$recursiveAnchor", "recursive anchors ($recursiveAnchor) are not supported"},
    {"unevaluatedProperties", "unevaluatedProperties is not supported: use additionalProperties"},
    {"unevaluatedItems", "unevaluatedItems is not supported: use items or additionalItems"},
};

}  // namespace overhead::schema
