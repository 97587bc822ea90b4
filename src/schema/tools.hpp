// A request's function tools and its tool_choice, checked before anything is queued: each tool's
// `parameters` must compile as a schema, names must be unique and well formed, and a named
// tool_choice must name one of them. Every error is a SchemaError whose what() names the field
// (`tools[3].function.parameters/properties/x/type: ...`, `tool_choice.function.name: ...`), for
// the gateway's 400.
//
// The request shape is OpenAI's chat completions one:
//   "tools": [{"type": "function",
//              "function": {"name": "get_weather", "description": "...",
//                           "parameters": {"type": "object", "properties": {...}}, "strict": true}}]
//   "tool_choice": "auto" | "none" | "required" | {"type": "function", "function": {"name": "get_weather"}}
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "schema/compiled_schema.hpp"

namespace overhead::schema {

// One checked function tool.
struct Tool {
  std::string name;         // matches ^[a-zA-Z0-9_-]{1,64}$, unique in the request
  std::string description;  // "" when absent
  // The parameters schema as given; a function without `parameters` takes none:
  // {"type": "object", "properties": {}, "additionalProperties": false} (OpenAI's reading).
  nlohmann::json parameters;
  bool strict = false;      // as given; recorded, not used to change validation
  CompiledSchema schema;    // `parameters` compiled: validates a call's arguments
};

// Checks a request's `tools` (an array, at most kMaxTools) and compiles every function's
// parameters. `parameters` must be an object schema: when it has a `type`, that type includes
// "object" (a call's arguments are a JSON object). `field` names the array in errors.
[[nodiscard]] std::vector<Tool> check_tools(const nlohmann::json& tools, std::string_view field = "tools");

// Whether name matches ^[a-zA-Z0-9_-]{1,64}$ (function and response_format schema names).
[[nodiscard]] bool is_valid_function_name(std::string_view name);

struct ToolChoice {
  enum class Mode {
    kAuto,      // the model may call tools or answer in text (the default with tools)
    kNone,      // no call (the default without tools)
    kRequired,  // at least one call: constrain with required_tool_calls_schema()
    kFunction,  // exactly a call of `function`: constrain with named_tool_schema()
  };
  Mode mode = Mode::kNone;
  std::string function;  // kFunction: the tool's name
};

// Reads `tool_choice` (nullptr when the request has none) against the checked tools. Errors:
// an unknown string, a malformed object, a function that is not among the tools, "required" or a
// function without tools.
[[nodiscard]] ToolChoice check_tool_choice(const nlohmann::json* tool_choice, const std::vector<Tool>& tools,
                                           std::string_view field = "tool_choice");

// The tool named `name`, or nullptr.
[[nodiscard]] const Tool* find_tool(const std::vector<Tool>& tools, std::string_view name);

}  // namespace overhead::schema
