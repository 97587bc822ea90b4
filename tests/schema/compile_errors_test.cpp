// compile() refuses what is not a schema and what it does not enforce, naming the place with the
// field and the JSON pointer, in words a client can act on.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "schema/compiled_schema.hpp"
#include "schema/keywords.hpp"
#include "schema/limits.hpp"

namespace {

using nlohmann::json;
using overhead::schema::compile;
using overhead::schema::CompileOptions;
using overhead::schema::SchemaError;

// The error's what() for `schema` compiled with the field name the gateway gives.
std::string error_of(const json& schema, const std::string& where = "response_format.json_schema.schema") {
  try {
    (void)compile(schema, CompileOptions{.where = where});
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "(compiled)";
}

TEST(CompileErrors, RemoteRefNamesTheField) {
  const json schema = json::parse(R"({"properties": {"a": {"$ref": "https://example.com/a.json"}}})");
  EXPECT_EQ(error_of(schema),
            "response_format.json_schema.schema/properties/a/$ref: remote references are not supported "
            "(\"https://example.com/a.json\"): use \"#/$defs/name\"");
  try {
    (void)compile(schema, CompileOptions{.where = "response_format.json_schema.schema"});
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.where(), "response_format.json_schema.schema/properties/a/$ref");
  }
}

TEST(CompileErrors, WrongTypeOfAKeywordsValue) {
  EXPECT_EQ(error_of(json::parse(R"({"type": "object", "properties": {"n": {"minimum": "3"}}})")),
            "response_format.json_schema.schema/properties/n/minimum: must be a number, not a string");
  EXPECT_EQ(error_of(json::parse(R"({"required": "a"})"), "tools[3].function.parameters"),
            "tools[3].function.parameters/required: must be an array of strings, not a string");
  EXPECT_EQ(error_of(json::parse(R"({"type": "strng"})"), ""),
            "/type: unknown type \"strng\" (null, boolean, object, array, number, string or integer)");
  EXPECT_EQ(error_of(json::parse(R"({"items": [{"type": 3}]})"), ""), "/items/0/type: a type must be a string, not an integer");
  EXPECT_EQ(error_of(json::parse(R"({"anyOf": []})"), ""), "/anyOf: must be a non-empty array of schemas");
  EXPECT_EQ(error_of(json::parse(R"({"properties": {"a": 5}})"), ""),
            "/properties/a: a schema must be an object or a boolean, not an integer");
  EXPECT_EQ(error_of(json::parse(R"({"minLength": -1})"), ""), "/minLength: must be a non-negative integer, not -1");
  EXPECT_EQ(error_of(json::parse(R"({"multipleOf": 0})"), ""), "/multipleOf: must be greater than 0");
  EXPECT_EQ(error_of(json::parse(R"({"exclusiveMinimum": true})"), ""),
            "/exclusiveMinimum: must be a number (the draft-4 boolean form is not supported)");
  EXPECT_EQ(error_of(json(3), ""), "schema: a schema must be an object or a boolean, not an integer");
}

TEST(CompileErrors, PointerSegmentsAreEscaped) {
  EXPECT_EQ(error_of(json::parse(R"({"properties": {"a/b~c": {"type": 1}}})"), ""),
            "/properties/a~1b~0c/type: a type must be a string, not an integer");
}

TEST(CompileErrors, RefusedKeywordsNameThePlace) {
  for (const auto& refused : overhead::schema::kRefusedKeywords) {
    json schema = {{"properties", {{"x", {{std::string(refused.keyword), true}}}}}};
    EXPECT_EQ(error_of(schema, "f"), "f/properties/x/" + std::string(refused.keyword) + ": " + std::string(refused.reason));
  }
  EXPECT_EQ(error_of(json::parse(R"({"unevaluatedProperties": false})"), ""),
            "/unevaluatedProperties: unevaluatedProperties is not supported: use additionalProperties");
}

TEST(CompileErrors, AnchorsAndDanglingRefs) {
  EXPECT_EQ(error_of(json::parse(R"({"$ref": "#node"})"), ""),
            "/$ref: only local JSON pointer references (\"#\", \"#/$defs/name\") are supported, not \"#node\"");
  EXPECT_EQ(error_of(json::parse(R"({"$ref": "#/$defs/missing"})"), ""),
            "/$ref: the reference \"#/$defs/missing\" points to nothing in the schema");
  EXPECT_EQ(error_of(json::parse(R"({"$ref": "other.json#/a"})"), ""),
            "/$ref: remote references are not supported (\"other.json#/a\"): use \"#/$defs/name\"");
}

TEST(CompileErrors, BrokenUnreferencedDefinitionIsReported) {
  EXPECT_EQ(error_of(json::parse(R"({"$defs": {"unused": {"maxItems": "x"}}})"), ""),
            "/$defs/unused/maxItems: must be a non-negative integer, not \"x\"");
}

TEST(CompileErrors, PatternThatDoesNotCompile) {
  const std::string e = error_of(json::parse(R"({"properties": {"a": {"pattern": "a(b"}}})"), "");
  EXPECT_EQ(e.rfind("/properties/a/pattern: the pattern does not compile at offset 3", 0), 0u) << e;
  const std::string p = error_of(json::parse(R"({"patternProperties": {"[": {}}})"), "");
  EXPECT_EQ(p.rfind("/patternProperties/[: the pattern does not compile", 0), 0u) << p;
}

TEST(CompileErrors, UnknownKeywordsAndAnnotationsAreIgnored) {
  EXPECT_NO_THROW((void)compile(json::parse(
      R"({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "title": "t",
          "description": "d", "default": 1, "examples": [1], "$comment": "c", "format": "email",
          "x-vendor": {"$ref": "https://not/followed"}})")));
}

TEST(CompileErrors, LocalRefsResolveIncludingRecursion) {
  const auto schema = compile(json::parse(R"({
    "$defs": {"node": {"type": "object", "properties": {"value": {"type": "integer"},
                                                         "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
                       "required": ["value"]}},
    "$ref": "#/$defs/node"})"));
  EXPECT_TRUE(schema.validate(json::parse(R"({"value": 1, "children": [{"value": 2, "children": []}]})")).valid());
  const auto bad = schema.validate(json::parse(R"({"value": 1, "children": [{"value": "2"}]})"));
  ASSERT_FALSE(bad.valid());
  EXPECT_EQ(bad.errors[0].to_string(), "/children/0/value: \"2\" is not of type integer");
  EXPECT_EQ(bad.errors[0].schema_path, "/$defs/node/properties/value/type");
}

// Limits: nesting of subschemas, the number of them, and the length of a pattern.
TEST(CompileLimits, DepthIsBounded) {
  json schema = {{"type", "string"}};
  for (std::size_t i = 0; i < overhead::schema::kMaxSchemaDepth + 1; ++i) schema = {{"items", schema}};
  const std::string e = error_of(schema, "");
  EXPECT_NE(e.find("schemas nested more than 64 levels deep"), std::string::npos) << e;
  EXPECT_EQ(e.rfind("/items/items/", 0), 0u) << e;
}

TEST(CompileLimits, JsonDepthIsBoundedBeforeAnythingElse) {
  json deep = 1;
  for (int i = 0; i < 300; ++i) deep = json::array({deep});
  const std::string e = error_of(json{{"const", deep}}, "");
  EXPECT_NE(e.find("nests more than 256 levels"), std::string::npos) << e;
}

TEST(CompileLimits, NodeCountIsBounded) {
  json properties = json::object();
  for (std::size_t i = 0; i <= overhead::schema::kMaxSchemaNodes; ++i) properties["p" + std::to_string(i)] = json::object();
  const std::string e = error_of(json{{"properties", properties}}, "");
  EXPECT_NE(e.find("more than 20000 subschemas"), std::string::npos) << e;
}

TEST(CompileLimits, PatternLengthIsBounded) {
  const std::string e = error_of(json{{"pattern", std::string(overhead::schema::kMaxPatternBytes + 1, 'a')}}, "");
  EXPECT_EQ(e, "/pattern: the pattern is longer than 4096 bytes");
}

}  // namespace
