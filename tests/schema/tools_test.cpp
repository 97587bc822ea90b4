// The request's tools and tool_choice checked, the constraints of "required" and of a named
// function built, and answers produced under them parsed back into calls. (The end-to-end test
// with a real engine generating under these constraints lives with the gateway's tests.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "schema/compiled_schema.hpp"
#include "schema/tool_constraints.hpp"
#include "schema/tools.hpp"

namespace {

using nlohmann::json;
using overhead::schema::check_tool_choice;
using overhead::schema::check_tools;
using overhead::schema::compile;
using overhead::schema::SchemaError;
using overhead::schema::ToolChoice;

const json kTools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
    "parameters": {"type": "object",
                   "properties": {"city": {"type": "string"}, "unit": {"$ref": "#/$defs/unit"}},
                   "required": ["city"], "additionalProperties": false,
                   "$defs": {"unit": {"enum": ["celsius", "fahrenheit"]}}},
    "strict": true}},
  {"type": "function", "function": {"name": "add",
    "parameters": {"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}},
  {"type": "function", "function": {"name": "now"}}
])");

std::string error_of(const json& tools) {
  try {
    (void)check_tools(tools);
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CheckTools, AcceptsOpenAIShape) {
  const auto tools = check_tools(kTools);
  ASSERT_EQ(tools.size(), 3u);
  EXPECT_EQ(tools[0].name, "get_weather");
  EXPECT_EQ(tools[0].description, "Weather in a city");
  EXPECT_TRUE(tools[0].strict);
  EXPECT_FALSE(tools[1].strict);
  // A function without parameters takes none.
  EXPECT_TRUE(tools[2].schema.validate(json::object()).valid());
  EXPECT_FALSE(tools[2].schema.validate(json{{"x", 1}}).valid());
}

TEST(CheckTools, ErrorsNameTheField) {
  json bad = kTools;
  bad[1]["function"]["parameters"]["properties"]["a"]["type"] = "int";
  EXPECT_EQ(error_of(bad), "tools[1].function.parameters/properties/a/type: unknown type \"int\" "
                           "(null, boolean, object, array, number, string or integer)");
  bad = kTools;
  bad[0]["function"]["parameters"]["properties"]["city"]["$ref"] = "https://example.com/city.json";
  EXPECT_EQ(error_of(bad).rfind("tools[0].function.parameters/properties/city/$ref: remote references are not supported", 0), 0u);
  bad = kTools;
  bad[2]["function"]["name"] = "add";
  EXPECT_EQ(error_of(bad), "tools[2].function.name: \"add\" is already the name of tools[1]");
  bad[2]["function"]["name"] = "has space";
  EXPECT_EQ(error_of(bad), "tools[2].function.name: must match ^[a-zA-Z0-9_-]{1,64}$, not \"has space\"");
  bad[2]["function"]["name"] = std::string(65, 'a');
  EXPECT_NE(error_of(bad).find("must match"), std::string::npos);
  bad = kTools;
  bad[1]["type"] = "code_interpreter";
  EXPECT_EQ(error_of(bad), "tools[1].type: only \"function\" tools are supported, not \"code_interpreter\"");
  bad = kTools;
  bad[1]["function"]["parameters"] = json{{"type", "array"}};
  EXPECT_EQ(error_of(bad), "tools[1].function.parameters/type: a function's parameters must be an object schema "
                           "(\"type\": \"object\"), not \"array\"");
  bad[1]["function"]["parameters"] = "x";
  EXPECT_EQ(error_of(bad), "tools[1].function.parameters: must be a JSON Schema object, not a string");
  EXPECT_EQ(error_of(json::object()), "tools: must be an array of tools, not an object");
  EXPECT_EQ(error_of(json::array({json{{"type", "function"}}})), "tools[0].function: is required");
}

TEST(CheckToolChoice, Modes) {
  const auto tools = check_tools(kTools);
  EXPECT_EQ(check_tool_choice(nullptr, tools).mode, ToolChoice::Mode::kAuto);
  EXPECT_EQ(check_tool_choice(nullptr, {}).mode, ToolChoice::Mode::kNone);
  const json required = "required";
  EXPECT_EQ(check_tool_choice(&required, tools).mode, ToolChoice::Mode::kRequired);
  const json named = json::parse(R"({"type": "function", "function": {"name": "add"}})");
  const auto choice = check_tool_choice(&named, tools);
  EXPECT_EQ(choice.mode, ToolChoice::Mode::kFunction);
  EXPECT_EQ(choice.function, "add");
  const json unknown = json::parse(R"({"type": "function", "function": {"name": "sub"}})");
  EXPECT_THROW(
      {
        try {
          (void)check_tool_choice(&unknown, tools);
        } catch (const SchemaError& e) {
          EXPECT_STREQ(e.what(), "tool_choice.function.name: no tool named \"sub\" in tools");
          throw;
        }
      },
      SchemaError);
  const json odd = "always";
  EXPECT_THROW((void)check_tool_choice(&odd, tools), SchemaError);
  EXPECT_THROW((void)check_tool_choice(&required, {}), SchemaError);
}

TEST(RequiredToolCalls, SchemaShapeAndRebasedRefs) {
  const auto tools = check_tools(kTools);
  const json schema = overhead::schema::required_tool_calls_schema(tools);
  EXPECT_EQ(schema["type"], "array");
  EXPECT_EQ(schema["minItems"], 1);
  EXPECT_FALSE(schema.contains("maxItems"));
  ASSERT_EQ(schema["items"]["anyOf"].size(), 3u);
  const json& weather = schema["items"]["anyOf"][0];
  EXPECT_EQ(weather["properties"]["name"]["const"], "get_weather");
  // The tool's $defs moved up to the document's, where "#/$defs/unit" still finds it.
  EXPECT_EQ(weather["properties"]["parameters"]["properties"]["unit"]["$ref"], "#/$defs/unit");
  EXPECT_FALSE(weather["properties"]["parameters"].contains("$defs"));
  EXPECT_EQ(schema["$defs"]["unit"], json::parse(R"({"enum": ["celsius", "fahrenheit"]})"));
  EXPECT_EQ(weather["required"], json::parse(R"(["name", "parameters"])"));
  EXPECT_EQ(schema["items"]["anyOf"][1]["properties"]["parameters"]["type"], "object");  // added
  EXPECT_EQ(overhead::schema::required_tool_calls_schema(tools, false)["maxItems"], 1);
}

// Definitions of several tools share the document's $defs: the same name with another schema is
// renamed, the same schema shared, references to other places rebased; the combined schema then
// accepts and refuses each tool's arguments exactly as the tool's own schema does.
TEST(RequiredToolCalls, DefinitionsOfSeveralToolsAndRecursiveRefs) {
  const auto tools = check_tools(json::parse(R"([
    {"type": "function", "function": {"name": "weather", "parameters": {"type": "object",
       "properties": {"unit": {"$ref": "#/$defs/unit"}}, "required": ["unit"],
       "$defs": {"unit": {"enum": ["c", "f"]}}}}},
    {"type": "function", "function": {"name": "distance", "parameters": {"type": "object",
       "properties": {"unit": {"$ref": "#/$defs/unit"}, "via": {"$ref": "#/definitions/stop"}}, "required": ["unit"],
       "$defs": {"unit": {"enum": ["m", "km"]}}, "definitions": {"stop": {"type": "string"}}}}},
    {"type": "function", "function": {"name": "same_unit", "parameters": {"type": "object",
       "properties": {"unit": {"$ref": "#/$defs/unit"}}, "$defs": {"unit": {"enum": ["c", "f"]}}}}},
    {"type": "function", "function": {"name": "tree", "parameters": {"type": "object",
       "properties": {"children": {"type": "array", "items": {"$ref": "#"}}, "leaf": {"$ref": "#/$defs/leaf"}},
       "$defs": {"leaf": {"type": "object", "properties": {"up": {"$ref": "#"}}}}}}}
  ])"));
  const json schema = overhead::schema::required_tool_calls_schema(tools);
  const json& alternatives = schema["items"]["anyOf"];
  EXPECT_EQ(alternatives[0]["properties"]["parameters"]["properties"]["unit"]["$ref"], "#/$defs/unit");
  EXPECT_EQ(alternatives[1]["properties"]["parameters"]["properties"]["unit"]["$ref"], "#/$defs/distance.unit");
  EXPECT_EQ(alternatives[1]["properties"]["parameters"]["properties"]["via"]["$ref"], "#/definitions/stop");
  EXPECT_EQ(alternatives[2]["properties"]["parameters"]["properties"]["unit"]["$ref"], "#/$defs/unit");  // shared
  EXPECT_EQ(alternatives[3]["properties"]["parameters"]["properties"]["children"]["items"]["$ref"],
            "#/items/anyOf/3/properties/parameters");
  EXPECT_EQ(schema["$defs"]["leaf"]["properties"]["up"]["$ref"], "#/items/anyOf/3/properties/parameters");
  EXPECT_EQ(schema["$defs"].size(), 3u);
  EXPECT_EQ(schema["definitions"].size(), 1u);

  const auto combined = compile(schema);
  const auto call = [](const char* name, const char* parameters) {
    return "[{\"name\": \"" + std::string(name) + "\", \"parameters\": " + parameters + "}]";
  };
  const std::pair<const char*, const char*> cases[] = {
      {"weather", R"({"unit": "c"})"},      {"weather", R"({"unit": "km"})"},  {"distance", R"({"unit": "km"})"},
      {"distance", R"({"unit": "c"})"},     {"distance", R"({"unit": "m", "via": 3})"},
      {"same_unit", R"({"unit": "f"})"},    {"same_unit", R"({"unit": "m"})"},
      {"tree", R"({"children": [{"children": [], "leaf": {"up": {"children": []}}}]})"},
      {"tree", R"({"children": [{"children": 1}]})"}, {"tree", R"({"leaf": {"up": {"leaf": 2}}})"}};
  for (const auto& [name, parameters] : cases) {
    const auto* tool = overhead::schema::find_tool(tools, name);
    ASSERT_NE(tool, nullptr);
    const bool own = tool->schema.validate(json::parse(parameters)).valid();
    EXPECT_EQ(combined.validate_text(call(name, parameters)).valid(), own) << name << " " << parameters;
    EXPECT_EQ(overhead::schema::parse_required_tool_calls(call(name, parameters), tools).ok(), own) << name << " " << parameters;
  }
}

TEST(RequiredToolCalls, ConstrainedAnswerValidatesAndParsesBack) {
  const auto tools = check_tools(kTools);
  const auto constraint = compile(overhead::schema::required_tool_calls_schema(tools));
  const std::string answer =
      R"([{"name": "get_weather", "parameters": {"unit": "celsius", "city": "Paris"}},
          {"name": "add", "parameters": {"b": 2, "a": 1}}, {"name": "now", "parameters": {}}])";
  EXPECT_TRUE(constraint.validate_text(answer).valid());
  const auto parsed = overhead::schema::parse_required_tool_calls(answer, tools);
  ASSERT_TRUE(parsed.ok()) << parsed.error->to_string();
  ASSERT_EQ(parsed.calls.size(), 3u);
  EXPECT_EQ(parsed.calls[0].name, "get_weather");
  EXPECT_EQ(parsed.calls[0].arguments, R"({"unit":"celsius","city":"Paris"})");  // the model's order
  EXPECT_EQ(parsed.calls[1].arguments, R"({"b":2,"a":1})");
  EXPECT_EQ(parsed.calls[2].arguments, "{}");
  // The combined schema and the parser agree on what is wrong.
  const std::string wrong_unit = R"([{"name": "get_weather", "parameters": {"city": "Paris", "unit": "kelvin"}}])";
  EXPECT_FALSE(constraint.validate_text(wrong_unit).valid());
  const auto bad = overhead::schema::parse_required_tool_calls(wrong_unit, tools);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error->to_string(), "/0/parameters/unit: \"kelvin\" is not one of [\"celsius\",\"fahrenheit\"]");
}

TEST(RequiredToolCalls, ParserRefusesWhatTheConstraintForbids) {
  const auto tools = check_tools(kTools);
  auto error = [&](const std::string& answer, bool parallel = true) {
    const auto parsed = overhead::schema::parse_required_tool_calls(answer, tools, parallel);
    return parsed.ok() ? std::string("(ok)") : parsed.error->to_string();
  };
  EXPECT_EQ(error("[]"), "(root): the answer holds no tool call");
  EXPECT_EQ(error(R"({"name": "now", "parameters": {}})"), "(root): the tool calls must be a JSON array, not an object");
  EXPECT_EQ(error(R"([{"name": "sub", "parameters": {}}])"), "/0/name: no tool named \"sub\"");
  EXPECT_EQ(error(R"([{"name": "now"}])"), "/0: the call of \"now\" has no parameters");
  EXPECT_EQ(error(R"([{"name": "now", "parameters": {}, "id": 1}])"),
            "/0: a tool call has only \"name\" and \"parameters\", not \"id\"");
  EXPECT_EQ(error(R"([{"name": "add", "parameters": {"a": 1}}])"), "/0/parameters: the required property \"b\" is missing");
  EXPECT_EQ(error(R"([{"name": "now", "parameters": {}}, {"name": "now", "parameters": {}}])", false),
            "(root): the answer holds 2 tool calls, but parallel_tool_calls is false");
  EXPECT_NE(error(R"([{"name": "add", "parameters": {"a": 1, )").find("not valid JSON"), std::string::npos);
}

TEST(NamedToolCall, SchemaIsTheParametersAndTheAnswerTheArguments) {
  const auto tools = check_tools(kTools);
  const json schema = overhead::schema::named_tool_schema(tools[1]);
  EXPECT_EQ(schema["type"], "object");
  EXPECT_EQ(schema["required"], json::parse(R"(["a", "b"])"));
  const auto constraint = compile(schema);
  const std::string answer = "{\"a\": 1, \"b\": 2}\n";
  EXPECT_TRUE(constraint.validate_text(answer).valid());
  const auto parsed = overhead::schema::parse_named_tool_call(answer, tools[1]);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].name, "add");
  EXPECT_EQ(parsed.calls[0].arguments, R"({"a":1,"b":2})");
  const auto bad = overhead::schema::parse_named_tool_call(R"({"a": "1", "b": 2})", tools[1]);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error->to_string(), "/a: \"1\" is not of type integer");
  EXPECT_EQ(overhead::schema::parse_named_tool_call("[1]", tools[1]).error->message,
            "the arguments of \"add\" must be a JSON object, not an array");
}

}  // namespace
