#include "schema/subschemas.hpp"

#include <string>

#include "schema/json_pointer.hpp"

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

void for_each_ref(nlohmann::json& schema, const std::function<void(std::string&)>& visit) {
  if (!schema.is_object()) return;
  if (const auto it = schema.find("$ref"); it != schema.end() && it->is_string()) visit(it->get_ref<std::string&>());
  for_each_subschema(schema, [&](nlohmann::json& sub) { for_each_ref(sub, visit); });
}

std::string ref_to(const std::vector<std::string>& segments) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "#";
  for (const std::string& segment : segments) {
    out += '/';
    for (const char c : escape_pointer_segment(segment)) {
      const auto b = static_cast<unsigned char>(c);
      // Unreserved characters, sub-delims, ':', '@', '/', '?' stay; everything else is %XX.
      const bool plain = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                         std::string_view("-._~!$&'()*+,;=:@/?").find(c) != std::string_view::npos;
      if (plain) {
        out += c;
      } else {
        out += '%';
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
    }
  }
  return out;
}

}  // namespace overhead::schema
