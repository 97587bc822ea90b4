#include "schema/tools.hpp"

#include "schema/internal/json_kind.hpp"
#include "schema/limits.hpp"

namespace overhead::schema {

namespace {

using nlohmann::json;

bool type_allows_object(const json& type) {
  if (type.is_string()) return type == "object";
  if (type.is_array()) {
    for (const auto& t : type) {
      if (t == "object") return true;
    }
  }
  return false;
}

}  // namespace

bool is_valid_function_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxToolNameBytes) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::vector<Tool> check_tools(const json& tools, std::string_view field) {
  const std::string where(field);
  if (!tools.is_array()) throw SchemaError(where, "must be an array of tools, not " + internal::json_kind(tools));
  if (tools.size() > kMaxTools) {
    throw SchemaError(where, "at most " + std::to_string(kMaxTools) + " tools are accepted, not " + std::to_string(tools.size()));
  }
  std::vector<Tool> out;
  out.reserve(tools.size());
  for (std::size_t i = 0; i < tools.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const json& tool = tools[i];
    if (!tool.is_object()) throw SchemaError(at, "must be an object, not " + internal::json_kind(tool));
    const auto type = tool.find("type");
    if (type == tool.end()) throw SchemaError(at + ".type", "is required (\"function\")");
    if (*type != "function") throw SchemaError(at + ".type", "only \"function\" tools are supported, not " + type->dump());
    const auto function = tool.find("function");
    if (function == tool.end()) throw SchemaError(at + ".function", "is required");
    if (!function->is_object()) throw SchemaError(at + ".function", "must be an object, not " + internal::json_kind(*function));

    const auto name = function->find("name");
    if (name == function->end()) throw SchemaError(at + ".function.name", "is required");
    if (!name->is_string()) throw SchemaError(at + ".function.name", "must be a string, not " + internal::json_kind(*name));
    const auto& name_text = name->get_ref<const std::string&>();
    if (!is_valid_function_name(name_text)) {
      throw SchemaError(at + ".function.name", "must match ^[a-zA-Z0-9_-]{1,64}$, not " + name->dump());
    }
    for (std::size_t j = 0; j < out.size(); ++j) {
      if (out[j].name == name_text) {
        throw SchemaError(at + ".function.name",
                          "\"" + name_text + "\" is already the name of " + where + "[" + std::to_string(j) + "]");
      }
    }

    std::string description;
    if (const auto d = function->find("description"); d != function->end() && !d->is_null()) {
      if (!d->is_string()) throw SchemaError(at + ".function.description", "must be a string, not " + internal::json_kind(*d));
      description = d->get<std::string>();
    }
    bool strict = false;
    if (const auto s = function->find("strict"); s != function->end() && !s->is_null()) {
      if (!s->is_boolean()) throw SchemaError(at + ".function.strict", "must be a boolean, not " + internal::json_kind(*s));
      strict = s->get<bool>();
    }

    const std::string parameters_at = at + ".function.parameters";
    json parameters = json{{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}};
    if (const auto p = function->find("parameters"); p != function->end() && !p->is_null()) {
      if (!p->is_object()) throw SchemaError(parameters_at, "must be a JSON Schema object, not " + internal::json_kind(*p));
      if (const auto t = p->find("type"); t != p->end() && !type_allows_object(*t)) {
        throw SchemaError(parameters_at + "/type", "a function's parameters must be an object schema (\"type\": \"object\"), not " + t->dump());
      }
      parameters = *p;
    }
    CompiledSchema compiled = compile(parameters, CompileOptions{.where = parameters_at});
    out.push_back(Tool{name_text, std::move(description), std::move(parameters), strict, std::move(compiled)});
  }
  return out;
}

const Tool* find_tool(const std::vector<Tool>& tools, std::string_view name) {
  for (const Tool& t : tools) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

ToolChoice check_tool_choice(const json* tool_choice, const std::vector<Tool>& tools, std::string_view field) {
  const std::string where(field);
  ToolChoice choice;
  if (tool_choice == nullptr || tool_choice->is_null()) {
    choice.mode = tools.empty() ? ToolChoice::Mode::kNone : ToolChoice::Mode::kAuto;
    return choice;
  }
  if (tool_choice->is_string()) {
    const auto& s = tool_choice->get_ref<const std::string&>();
    if (s == "auto") {
      choice.mode = ToolChoice::Mode::kAuto;
    } else if (s == "none") {
      choice.mode = ToolChoice::Mode::kNone;
    } else if (s == "required") {
      choice.mode = ToolChoice::Mode::kRequired;
    } else {
      throw SchemaError(where, "must be \"auto\", \"none\", \"required\" or a function, not " + tool_choice->dump());
    }
    if (choice.mode == ToolChoice::Mode::kRequired && tools.empty()) {
      throw SchemaError(where, "\"required\" needs at least one tool in tools");
    }
    return choice;
  }
  if (!tool_choice->is_object()) {
    throw SchemaError(where, "must be a string or an object, not " + internal::json_kind(*tool_choice));
  }
  const auto type = tool_choice->find("type");
  if (type == tool_choice->end() || *type != "function") {
    throw SchemaError(where + ".type", "must be \"function\"");
  }
  const auto function = tool_choice->find("function");
  if (function == tool_choice->end() || !function->is_object()) {
    throw SchemaError(where + ".function", "must be an object with the function's name");
  }
  const auto name = function->find("name");
  if (name == function->end() || !name->is_string()) {
    throw SchemaError(where + ".function.name", "must be a string");
  }
  const auto& name_text = name->get_ref<const std::string&>();
  if (find_tool(tools, name_text) == nullptr) {
    throw SchemaError(where + ".function.name", "no tool named " + name->dump() + " in tools");
  }
  choice.mode = ToolChoice::Mode::kFunction;
  choice.function = name_text;
  return choice;
}

}  // namespace overhead::schema
