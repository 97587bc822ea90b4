// The constraints of tool_choice "required" and of a named function, as JSON Schemas an engine can
// be constrained to (another part of the code spells a schema in each engine's dialect: this
// module only builds the schema), and the parsers of the text an engine produces under them back
// into calls.
//
// tool_choice "required": the answer is a JSON array of one or more calls (exactly one when
// parallel_tool_calls is false), each {"name": <a tool's name>, "parameters": <its arguments>}:
//   {"type": "array", "minItems": 1,
//    "items": {"anyOf": [{"type": "object",
//                         "properties": {"name": {"const": "get_weather"},
//                                        "parameters": <get_weather's parameters>},
//                         "required": ["name", "parameters"], "additionalProperties": false}, ...]}}
//   answer: [{"name": "get_weather", "parameters": {"city": "Paris"}}]
// Each tool's parameters are moved into that document and their local `$ref`s follow them: their
// `$defs` and `definitions` go up to the document's own (engines that resolve only
// "#/$defs/name" find them there, as vLLM builds it), under the same name when free or holding the
// same reference-free schema, else renamed "<tool>.<name>" ("#/$defs/unit" ->
// "#/$defs/get_weather.unit"); any other local `$ref` is rebased below the parameters' new place
// ("#" -> "#/items/anyOf/0/properties/parameters"). Their `$id` and `$schema` are dropped (a nested
// `$id` would change how an engine resolves the refs).
//
// A named function: the answer is the arguments object itself, so the constraint is the tool's
// parameters (with "type": "object" added when they have no `type`).
//   answer: {"city": "Paris"}
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/compiled_schema.hpp"
#include "schema/tools.hpp"

namespace overhead::schema {

// The constraint for tool_choice "required" over `tools` (not empty).
[[nodiscard]] nlohmann::json required_tool_calls_schema(const std::vector<Tool>& tools, bool parallel_tool_calls = true);

// The constraint for a tool_choice naming `tool`.
[[nodiscard]] nlohmann::json named_tool_schema(const Tool& tool);

// One call read from a constrained answer.
struct ConstrainedCall {
  std::string name;
  std::string arguments;  // the arguments object as compact JSON text, members in the model's order
};

struct ConstrainedCalls {
  std::vector<ConstrainedCall> calls;     // empty when error is set
  std::optional<ValidationError> error;   // the answer is not JSON, not of the constrained shape, or
                                          // a call's arguments do not validate against its tool
  bool ok() const { return !error.has_value(); }
};

// Parses an answer produced under required_tool_calls_schema(tools, parallel_tool_calls): every
// call's name is one of `tools` and its arguments validate against that tool's parameters (the
// same verdict as the combined schema, which a test checks). The error's instance path points into
// the answer ("/1/parameters/city: ..."); its schema path is in the tool's parameters for an
// argument error, in the required-calls schema for the array and call shape ("/minItems").
[[nodiscard]] ConstrainedCalls parse_required_tool_calls(std::string_view answer, const std::vector<Tool>& tools,
                                                         bool parallel_tool_calls = true);

// Parses an answer produced under named_tool_schema(tool): one call of `tool` whose arguments are
// the answer, validated against its parameters.
[[nodiscard]] ConstrainedCalls parse_named_tool_call(std::string_view answer, const Tool& tool);

}  // namespace overhead::schema
