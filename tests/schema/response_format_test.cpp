// response_format read into what it asks: the constraint to send and the compiled schema that
// checks the final answer; errors name the field.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "schema/response_format.hpp"

namespace {

using nlohmann::json;
using overhead::schema::check_response_format;
using overhead::schema::ResponseFormat;
using overhead::schema::SchemaError;

std::string error_of(const json& rf) {
  try {
    (void)check_response_format(&rf);
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ResponseFormat, TextIsNoConstraint) {
  EXPECT_FALSE(check_response_format(nullptr).constrained());
  const json text = {{"type", "text"}};
  const auto rf = check_response_format(&text);
  EXPECT_EQ(rf.kind, ResponseFormat::Kind::kText);
  EXPECT_FALSE(rf.compiled.has_value());
}

TEST(ResponseFormat, JsonObjectIsAnyObject) {
  const json rf_json = {{"type", "json_object"}};
  const auto rf = check_response_format(&rf_json);
  EXPECT_EQ(rf.kind, ResponseFormat::Kind::kJsonObject);
  EXPECT_EQ(rf.schema, json::parse(R"({"type": "object"})"));
  ASSERT_TRUE(rf.compiled.has_value());
  EXPECT_TRUE(rf.compiled->validate_text(R"({"anything": [1]})").valid());
  EXPECT_EQ(rf.compiled->validate_text("[1]").errors.at(0).to_string(), "(root): [1] is not of type object");
}

TEST(ResponseFormat, JsonSchema) {
  const json rf_json = json::parse(R"({"type": "json_schema", "json_schema": {"name": "person", "strict": true,
      "description": "a person", "schema": {"type": "object", "properties": {"age": {"type": "integer"}},
      "required": ["age"], "additionalProperties": false}}})");
  const auto rf = check_response_format(&rf_json);
  EXPECT_EQ(rf.kind, ResponseFormat::Kind::kJsonSchema);
  EXPECT_EQ(rf.name, "person");
  EXPECT_EQ(rf.description, "a person");
  EXPECT_TRUE(rf.strict);
  EXPECT_EQ(rf.schema, rf_json["json_schema"]["schema"]);
  EXPECT_TRUE(rf.compiled->validate_text(R"({"age": 3})").valid());
  EXPECT_EQ(rf.compiled->validate_text(R"({"age": -1.5})").errors.at(0).to_string(), "/age: -1.5 is not of type integer");
}

TEST(ResponseFormat, ErrorsNameTheField) {
  EXPECT_EQ(error_of(json{{"type", "xml"}}),
            "response_format.type: must be \"text\", \"json_object\" or \"json_schema\", not \"xml\"");
  EXPECT_EQ(error_of(json::object()), "response_format.type: is required");
  EXPECT_EQ(error_of(json{{"type", "json_schema"}}), "response_format.json_schema: is required when type is \"json_schema\"");
  EXPECT_EQ(error_of(json::parse(R"({"type": "json_schema", "json_schema": {"schema": {}}})")),
            "response_format.json_schema.name: is required");
  EXPECT_EQ(error_of(json::parse(R"({"type": "json_schema", "json_schema": {"name": "a b"}})")),
            "response_format.json_schema.name: must match ^[a-zA-Z0-9_-]{1,64}$, not \"a b\"");
  EXPECT_EQ(error_of(json::parse(R"({"type": "json_schema", "json_schema": {"name": "a", "strict": "yes"}})")),
            "response_format.json_schema.strict: must be a boolean, not a string");
  EXPECT_EQ(error_of(json::parse(R"({"type": "json_schema", "json_schema": {"name": "a", "schema": [1]}})")),
            "response_format.json_schema.schema: must be a JSON Schema (an object), not an array");
  EXPECT_EQ(error_of(json::parse(
                R"({"type": "json_schema", "json_schema": {"name": "a", "schema": {"properties": {"a": {"$ref": "http://x/y"}}}}})")),
            "response_format.json_schema.schema/properties/a/$ref: remote references are not supported (\"http://x/y\"): "
            "use \"#/$defs/name\"");
  EXPECT_EQ(error_of(json::parse(
                R"({"type": "json_schema", "json_schema": {"name": "a", "schema": {"unevaluatedProperties": false}}})")),
            "response_format.json_schema.schema/unevaluatedProperties: unevaluatedProperties is not supported: use "
            "additionalProperties");
}

}  // namespace
