#include "schema/subschemas.hpp"

#include <string>

namespace overhead::schema {

namespace {

constexpr std::string_view kSchemaValued[] = {"items",  "additionalItems", "additionalProperties", "contains",
                                              "propertyNames", "not", "if", "then", "else"};
constexpr std::string_view kSchemaMaps[] = {"properties", "patternProperties", "$defs", "definitions",
                                            "dependentSchemas"};
constexpr std::string_view kSchemaArrays[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};

}  // namespace

void for_each_subschema(nlohmann::json& schema, const std::function<void(nlohmann::json&)>& visit) {
  if (!schema.is_object()) return;
  for (const std::string_view keyword : kSchemaValued) {
    const auto it = schema.find(keyword);
    if (it != schema.end() && (it->is_object() || it->is_boolean())) visit(*it);
  }
  for (const std::string_view keyword : kSchemaMaps) {
    const auto it = schema.find(keyword);
    if (it == schema.end() || !it->is_object()) continue;
    for (auto& [name, sub] : it->items()) visit(sub);
  }
  for (const std::string_view keyword : kSchemaArrays) {
    const auto it = schema.find(keyword);
    if (it == schema.end() || !it->is_array()) continue;
    for (auto& sub : *it) visit(sub);
  }
  if (const auto it = schema.find("dependencies"); it != schema.end() && it->is_object()) {
    for (auto& [name, dep] : it->items()) {
      if (dep.is_object() || dep.is_boolean()) visit(dep);
    }
  }
}

void rebase_local_refs(nlohmann::json& schema, std::string_view base) {
  if (!schema.is_object()) return;
  if (const auto it = schema.find("$ref"); it != schema.end() && it->is_string()) {
    const auto& ref = it->get_ref<const std::string&>();
    if (!ref.empty() && ref[0] == '#') *it = "#" + std::string(base) + ref.substr(1);
  }
  for_each_subschema(schema, [&](nlohmann::json& sub) { rebase_local_refs(sub, base); });
}

}  // namespace overhead::schema
