#include "schema/tool_constraints.hpp"

#include <map>
#include <set>
#include <utility>

#include "schema/internal/json_kind.hpp"
#include "schema/json_pointer.hpp"
#include "schema/subschemas.hpp"

namespace overhead::schema {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

json object_parameters(const Tool& tool) {
  json parameters = tool.parameters;
  if (parameters.is_object() && !parameters.contains("type")) parameters["type"] = "object";
  return parameters;
}

ConstrainedCalls failure(std::string instance_path, std::string schema_path, std::string message) {
  ConstrainedCalls out;
  out.error = ValidationError{std::move(instance_path), std::move(schema_path), std::move(message)};
  return out;
}

// Parses the answer twice: as json for validation, and as ordered_json to give the arguments back
// in the order the model wrote them.
bool parse_both(std::string_view answer, json& value, ordered_json& ordered, std::string& error) {
  if (!parse_answer(answer, value, error)) return false;
  ordered = ordered_json::parse(answer);
  return true;
}

// A validation error of one call's arguments, its instance path moved below `prefix`.
ValidationError below(const ValidationError& e, const std::string& prefix) {
  return ValidationError{prefix + e.instance_path, e.schema_path, e.message};
}

// Moves one tool's parameters into the "required" document at items/anyOf/<index>: its `$defs`
// and `definitions` go up to the document's own (where engines that resolve only "#/$defs/name"
// find them; vLLM does the same), under their own name when it is free or holds the same schema,
// else "<tool>.<name>"; every other local reference is rebased below the parameters' new place.
json place_parameters(json parameters, std::size_t index, const std::string& tool_name, json& root) {
  static constexpr std::string_view kContainers[] = {"$defs", "definitions"};
  const std::string base = "/items/anyOf/" + std::to_string(index) + "/properties/parameters";
  if (!parameters.is_object()) return parameters;
  parameters.erase("$id");
  parameters.erase("$schema");

  // A reference to a container itself ("#/$defs") would lose its target: keep such a tool whole.
  bool hoist = true;
  for_each_ref(parameters, [&](std::string& ref) {
    const auto segments = parse_fragment_pointer(ref);
    if (segments && segments->size() == 1 && ((*segments)[0] == "$defs" || (*segments)[0] == "definitions")) {
      hoist = false;
    }
  });

  // (container, name) -> the name in the document's container.
  std::map<std::pair<std::string, std::string>, std::string> renamed;
  std::map<std::pair<std::string, std::string>, bool> shared;  // same schema already there
  if (hoist) {
    for (const std::string_view container : kContainers) {
      const auto defs = parameters.find(container);
      if (defs == parameters.end() || !defs->is_object()) continue;
      const json* taken = root.contains(container) ? &root[std::string(container)] : nullptr;
      std::set<std::string> assigned;  // names this tool's definitions take in the container
      const auto in_use = [&](const std::string& n) { return assigned.count(n) > 0 || (taken != nullptr && taken->contains(n)); };
      for (const auto& [name, def] : defs->items()) {
        std::string target = name;
        bool same = false;
        if (assigned.count(target) > 0) {
          target = tool_name + "." + name;
          for (int n = 2; in_use(target); ++n) target = tool_name + "." + name + "." + std::to_string(n);
        } else if (taken != nullptr && taken->contains(target)) {
          // Shared only when equal and free of references (which would resolve per tool).
          bool has_refs = false;
          json copy = def;
          for_each_ref(copy, [&](std::string&) { has_refs = true; });
          same = !has_refs && (*taken)[target] == def;
          if (!same) {
            target = tool_name + "." + name;
            for (int n = 2; in_use(target); ++n) target = tool_name + "." + name + "." + std::to_string(n);
          }
        }
        assigned.insert(target);
        renamed[{std::string(container), name}] = target;
        shared[{std::string(container), name}] = same;
      }
    }
  }

  for_each_ref(parameters, [&](std::string& ref) {
    auto segments = parse_fragment_pointer(ref);
    if (!segments) return;  // not local: compile() refused it already
    if (segments->size() >= 2) {
      const auto it = renamed.find({(*segments)[0], (*segments)[1]});
      if (it != renamed.end()) {
        (*segments)[1] = it->second;
        ref = ref_to(*segments);
        return;
      }
    }
    ref = "#" + base + ref.substr(1);  // the fragment as written, below the new place
  });

  if (hoist) {
    for (const std::string_view container : kContainers) {
      const auto defs = parameters.find(container);
      if (defs == parameters.end() || !defs->is_object()) continue;
      json& into = root[std::string(container)];
      for (auto& [name, def] : defs->items()) {
        const std::pair<std::string, std::string> key{std::string(container), name};
        if (!shared[key]) into[renamed[key]] = std::move(def);
      }
      parameters.erase(defs);
    }
  }
  return parameters;
}

}  // namespace

json required_tool_calls_schema(const std::vector<Tool>& tools, bool parallel_tool_calls) {
  json schema{{"type", "array"}, {"minItems", 1}};
  if (!parallel_tool_calls) schema["maxItems"] = 1;
  json alternatives = json::array();
  for (std::size_t i = 0; i < tools.size(); ++i) {
    json parameters = place_parameters(object_parameters(tools[i]), i, tools[i].name, schema);
    alternatives.push_back(json{{"type", "object"},
                                {"properties", {{"name", {{"const", tools[i].name}}}, {"parameters", std::move(parameters)}}},
                                {"required", {"name", "parameters"}},
                                {"additionalProperties", false}});
  }
  schema["items"] = json{{"anyOf", std::move(alternatives)}};
  return schema;
}

json named_tool_schema(const Tool& tool) { return object_parameters(tool); }

ConstrainedCalls parse_required_tool_calls(std::string_view answer, const std::vector<Tool>& tools,
                                           bool parallel_tool_calls) {
  json value;
  ordered_json ordered;
  std::string error;
  if (!parse_both(answer, value, ordered, error)) return failure("", "", std::move(error));
  if (!value.is_array()) return failure("", "/type", "the tool calls must be a JSON array, not " + internal::json_kind(value));
  if (value.empty()) return failure("", "/minItems", "the answer holds no tool call");
  if (!parallel_tool_calls && value.size() > 1) {
    return failure("", "/maxItems", "the answer holds " + std::to_string(value.size()) +
                                         " tool calls, but parallel_tool_calls is false");
  }
  ConstrainedCalls out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string at = append_pointer("", i);
    const json& call = value[i];
    if (!call.is_object()) return failure(at, "/items", "a tool call must be an object {\"name\", \"parameters\"}");
    for (const auto& [key, member] : call.items()) {
      if (key != "name" && key != "parameters") {
        return failure(at, "/items", "a tool call has only \"name\" and \"parameters\", not \"" + key + "\"");
      }
    }
    const auto name = call.find("name");
    if (name == call.end() || !name->is_string()) return failure(at + "/name", "/items", "the tool call has no name");
    const Tool* tool = find_tool(tools, name->get_ref<const std::string&>());
    if (tool == nullptr) return failure(at + "/name", "/items", "no tool named " + name->dump());
    const auto parameters = call.find("parameters");
    if (parameters == call.end()) return failure(at, "/items", "the call of " + name->dump() + " has no parameters");
    if (!parameters->is_object()) {
      return failure(at + "/parameters", "/items", "the arguments of " + name->dump() + " must be a JSON object");
    }
    const auto result = tool->schema.validate(*parameters);
    if (!result.valid()) {
      ConstrainedCalls bad;
      bad.error = below(result.errors[0], at + "/parameters");
      return bad;
    }
    out.calls.push_back(ConstrainedCall{tool->name, ordered[i]["parameters"].dump()});
  }
  return out;
}

ConstrainedCalls parse_named_tool_call(std::string_view answer, const Tool& tool) {
  json value;
  ordered_json ordered;
  std::string error;
  if (!parse_both(answer, value, ordered, error)) return failure("", "", std::move(error));
  if (!value.is_object()) {
    return failure("", "/type", "the arguments of \"" + tool.name + "\" must be a JSON object, not " + internal::json_kind(value));
  }
  const auto result = tool.schema.validate(value);
  if (!result.valid()) {
    ConstrainedCalls bad;
    bad.error = result.errors[0];
    return bad;
  }
  ConstrainedCalls out;
  out.calls.push_back(ConstrainedCall{tool.name, ordered.dump()});
  return out;
}

}  // namespace overhead::schema
