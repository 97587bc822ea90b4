// A chat request's structured-output constraint, end to end at the front: built from the body
// before anything is queued (response_format json_object / json_schema, tool_choice "required" or
// a named function; a bad one is a 400 naming the field), carried to the worker as the item's JSON
// Schema (the engine is constrained in its dialect's spelling, backends/engine_dialect.hpp), and
// the engine's answer read back at the front: validated against the compiled schema
// (response_format) or parsed into tool calls (tool_choice), one whole JSON document either way.
//
// An answer that does not follow its constraint (an engine that ignored it, an answer cut at
// max_tokens) is never passed on as if it did: the client gets `invalid_structured_output` naming
// the first validation error (a 502 when not streamed, an error event in place of the finish when
// streamed).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/answer.hpp"
#include "schema/compiled_schema.hpp"
#include "schema/tools.hpp"
#include "serve/api_error.hpp"

namespace overhead::serve {

struct AnswerConstraint {
  enum class Kind { json_object, json_schema, tool_required, tool_named };
  Kind kind = Kind::json_object;
  std::string schema_text;  // the JSON Schema sent to the engine, compact
  std::optional<schema::CompiledSchema> compiled;  // json_object / json_schema: validates the answer
  std::vector<schema::Tool> tools;  // tool_required: the request's tools; tool_named: the one named
  bool parallel_tool_calls = true;  // tool_required: false allows exactly one call

  [[nodiscard]] bool makes_tool_calls() const { return kind == Kind::tool_required || kind == Kind::tool_named; }
  // The record's `constraint`: "json_object", "json_schema", "tool_required", "tool_named".
  [[nodiscard]] const char* name() const;
};

// The constraint of `response_format` (null, or {"type": "text"}: none). Throws RequestError (400)
// naming the field (`response_format.json_schema.schema`) when it cannot be used.
[[nodiscard]] std::shared_ptr<const AnswerConstraint> response_format_constraint(const nlohmann::ordered_json* response_format);

// Checks every tool's `parameters` as a JSON Schema the gateway can enforce (schema::check_tools),
// whatever tool_choice says: a tool whose parameters are not a schema is the client's 400 naming
// the field (tools[i].function.parameters/...), before anything is queued.
void check_tool_parameters(const nlohmann::ordered_json& tools);

// The constraint of tool_choice "required" (`function` empty) or naming `function`, over the
// request's `tools` (as sent). Throws RequestError (400) naming the tool's field
// (`tools[1].function.parameters/...`) when a parameters schema cannot be used.
[[nodiscard]] std::shared_ptr<const AnswerConstraint> tool_choice_constraint(const nlohmann::ordered_json& tools,
                                                                             const std::string& function, bool parallel_tool_calls);

// The engine's whole text read under `constraint`: the content (json_object / json_schema: the
// text itself) or the calls (ids call_id(call_id_prefix, i)); `error` set when it does not follow
// the constraint.
struct ConstrainedAnswer {
  std::string content;
  std::vector<agent::ToolCall> calls;
  std::optional<ApiError> error;
};
[[nodiscard]] ConstrainedAnswer read_constrained(const AnswerConstraint& constraint, std::string_view text,
                                                 std::string_view call_id_prefix, std::string_view finish_reason);

}  // namespace overhead::serve
