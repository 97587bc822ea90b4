#include "serve/answer_constraint.hpp"

#include "schema/response_format.hpp"
#include "schema/schema_error.hpp"
#include "schema/tool_constraints.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {
namespace {

// A SchemaError as the client's 400: its where() starts with the field, then the JSON pointer.
[[noreturn]] void refuse(const schema::SchemaError& e) {
  const std::string& where = e.where();
  throw RequestError{{400, e.what(), "invalid_request_error", where.substr(0, where.find('/')), "invalid_value"}};
}

ApiError invalid_output(const AnswerConstraint& c, const std::string& what, std::string_view finish_reason) {
  std::string message = std::string("The engine's answer does not follow the requested ") +
                        (c.makes_tool_calls() ? "tool_choice (a call of the tools given)" : "response_format") + ": " + what;
  if (finish_reason == "length")
    message += " (the generation stopped at max_tokens, finish_reason \"length\": allow more tokens)";
  return {502, std::move(message), "server_error", "", "invalid_structured_output"};
}

}  // namespace

const char* AnswerConstraint::name() const {
  switch (kind) {
    case Kind::json_object: return "json_object";
    case Kind::json_schema: return "json_schema";
    case Kind::tool_required: return "tool_required";
    case Kind::tool_named: return "tool_named";
  }
  return "";
}

std::shared_ptr<const AnswerConstraint> response_format_constraint(const nlohmann::ordered_json* response_format) {
  if (!response_format || response_format->is_null()) return nullptr;
  const nlohmann::json plain = *response_format;
  schema::ResponseFormat f;
  try {
    f = schema::check_response_format(&plain, "response_format");
  } catch (const schema::SchemaError& e) {
    refuse(e);
  }
  if (!f.constrained()) return nullptr;
  auto c = std::make_shared<AnswerConstraint>();
  c->kind = f.kind == schema::ResponseFormat::Kind::kJsonObject ? AnswerConstraint::Kind::json_object : AnswerConstraint::Kind::json_schema;
  // The client's schema in the client's key order: an engine generates the properties in the
  // order the schema lists them.
  const auto js = response_format->find("json_schema");
  const bool as_sent = c->kind == AnswerConstraint::Kind::json_schema && js != response_format->end() && js->contains("schema");
  c->schema_text = as_sent ? (*js)["schema"].dump() : f.schema.dump();
  c->compiled = std::move(f.compiled);
  return c;
}

void check_tool_parameters(const nlohmann::ordered_json& tools) {
  try {
    (void)schema::check_tools(nlohmann::json(tools), "tools");
  } catch (const schema::SchemaError& e) {
    refuse(e);
  }
}

std::shared_ptr<const AnswerConstraint> tool_choice_constraint(const nlohmann::ordered_json& tools, const std::string& function,
                                                               bool parallel_tool_calls) {
  auto c = std::make_shared<AnswerConstraint>();
  c->parallel_tool_calls = parallel_tool_calls;
  try {
    std::vector<schema::Tool> checked = schema::check_tools(nlohmann::json(tools), "tools");
    if (function.empty()) {
      c->kind = AnswerConstraint::Kind::tool_required;
      c->schema_text = schema::required_tool_calls_schema(checked, parallel_tool_calls).dump();
      c->tools = std::move(checked);
    } else {
      c->kind = AnswerConstraint::Kind::tool_named;
      const schema::Tool* tool = schema::find_tool(checked, function);
      if (!tool) throw schema::SchemaError("tool_choice.function.name", "names '" + function + "', which is not among 'tools'");
      c->schema_text = schema::named_tool_schema(*tool).dump();
      c->tools.push_back(*tool);
    }
  } catch (const schema::SchemaError& e) {
    refuse(e);
  }
  return c;
}

ConstrainedAnswer read_constrained(const AnswerConstraint& c, std::string_view text, std::string_view call_id_prefix,
                                   std::string_view finish_reason) {
  ConstrainedAnswer out;
  if (!c.makes_tool_calls()) {
    const schema::ValidationResult result = c.compiled->validate_text(text);
    if (!result.valid()) out.error = invalid_output(c, result.errors[0].to_string(), finish_reason);
    else out.content = std::string(text);
    return out;
  }
  const schema::ConstrainedCalls calls = c.kind == AnswerConstraint::Kind::tool_required
                                             ? schema::parse_required_tool_calls(text, c.tools, c.parallel_tool_calls)
                                             : schema::parse_named_tool_call(text, c.tools.front());
  if (!calls.ok()) {
    out.error = invalid_output(c, calls.error->to_string(), finish_reason);
    return out;
  }
  for (std::size_t i = 0; i < calls.calls.size(); ++i)
    out.calls.push_back(agent::ToolCall{agent::call_id(call_id_prefix, i), calls.calls[i].name, calls.calls[i].arguments});
  return out;
}

}  // namespace overhead::serve
