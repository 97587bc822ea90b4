// The schema compiler: checks every keyword of a schema document and turns it into the flat node
// program of internal/program.hpp. Everything a client can get wrong is reported here, once, as a
// SchemaError naming the JSON pointer of the place; validation then never meets a malformed schema.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <unordered_map>

#include "schema/internal/json_kind.hpp"
#include "schema/internal/program.hpp"
#include "schema/json_pointer.hpp"
#include "schema/keywords.hpp"
#include "schema/limits.hpp"
#include "schema/schema_error.hpp"
#include "util/json_depth.hpp"

namespace overhead::schema::internal {

namespace {

using nlohmann::json;

std::size_t count_values(const json& v, std::size_t depth, const std::string& where) {
  if (depth > util::kMaxJsonDepth) {
    throw SchemaError(where, "the schema nests more than " + std::to_string(util::kMaxJsonDepth) + " levels deep");
  }
  std::size_t n = 1;
  if (v.is_object() || v.is_array()) {
    for (const auto& child : v) {
      n += count_values(child, depth + 1, where);
      if (n > kMaxSchemaValues) {
        throw SchemaError(where, "the schema is larger than " + std::to_string(kMaxSchemaValues) + " JSON values");
      }
    }
  }
  return n;
}

class Compiler {
 public:
  Compiler(Program& program, const std::string& where, bool draft7) : program_(program), where_(where), draft7_(draft7) {}

  NodeIndex compile(const json& schema, const std::string& pointer, std::size_t depth) {
    if (const auto it = by_pointer_.find(pointer); it != by_pointer_.end()) return it->second;
    if (depth > kMaxSchemaDepth) {
      fail(pointer, "schemas nested more than " + std::to_string(kMaxSchemaDepth) + " levels deep (references included)");
    }
    if (program_.nodes.size() >= kMaxSchemaNodes) {
      fail(pointer, "the schema has more than " + std::to_string(kMaxSchemaNodes) + " subschemas");
    }
    const auto index = static_cast<NodeIndex>(program_.nodes.size());
    program_.nodes.emplace_back();
    by_pointer_.emplace(pointer, index);
    // Built apart and moved in at the end: compiling children grows program_.nodes.
    Node node;
    node.pointer = pointer;
    if (schema.is_boolean()) {
      node.is_boolean = true;
      node.boolean_value = schema.get<bool>();
    } else if (!schema.is_object()) {
      fail(pointer, "a schema must be an object or a boolean, not " + json_kind(schema));
    } else {
      compile_object(schema, pointer, depth, node);
    }
    program_.nodes[static_cast<std::size_t>(index)] = std::move(node);
    return index;
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& reason) const {
    throw SchemaError(where_ + pointer, reason);
  }

  NodeIndex child(const json& schema, const std::string& pointer, std::size_t depth) {
    return compile(schema, pointer, depth + 1);
  }

  std::vector<NodeIndex> schema_array(const json& value, const std::string& pointer, std::size_t depth,
                                      bool non_empty) {
    if (!value.is_array()) fail(pointer, "must be an array of schemas, not " + json_kind(value));
    if (non_empty && value.empty()) fail(pointer, "must be a non-empty array of schemas");
    std::vector<NodeIndex> out;
    for (std::size_t i = 0; i < value.size(); ++i) out.push_back(child(value[i], append_pointer(pointer, i), depth));
    return out;
  }

  std::size_t non_negative_integer(const json& value, const std::string& pointer) const {
    if (value.is_number_unsigned()) return value.get<std::size_t>();
    if (value.is_number_integer() && value.get<std::int64_t>() >= 0) return static_cast<std::size_t>(value.get<std::int64_t>());
    if (value.is_number_float()) {
      const double d = value.get<double>();
      if (d >= 0 && std::floor(d) == d && d < 1e18) return static_cast<std::size_t>(d);
    }
    fail(pointer, "must be a non-negative integer, not " + value.dump());
  }

  json number(const json& value, const std::string& pointer) const {
    if (!value.is_number()) {
      if (value.is_boolean()) fail(pointer, "must be a number (the draft-4 boolean form is not supported)");
      fail(pointer, "must be a number, not " + json_kind(value));
    }
    if (value.is_number_float() && !std::isfinite(value.get<double>())) fail(pointer, "must be a finite number");
    return value;
  }

  std::vector<std::string> string_array(const json& value, const std::string& pointer) const {
    if (!value.is_array()) fail(pointer, "must be an array of strings, not " + json_kind(value));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) fail(append_pointer(pointer, i), "must be a string, not " + json_kind(value[i]));
      out.push_back(value[i].get<std::string>());
    }
    return out;
  }

  std::size_t pattern(const json& value, const std::string& pointer) {
    if (!value.is_string()) fail(pointer, "must be a string (a regular expression), not " + json_kind(value));
    const auto& source = value.get_ref<const std::string&>();
    return compile_pattern(source, pointer);
  }

  std::size_t compile_pattern(const std::string& source, const std::string& pointer) {
    if (source.size() > kMaxPatternBytes) {
      fail(pointer, "the pattern is longer than " + std::to_string(kMaxPatternBytes) + " bytes");
    }
    try {
      program_.patterns.push_back(std::make_unique<Pattern>(source));
    } catch (const std::invalid_argument& e) {
      fail(pointer, e.what());
    }
    return program_.patterns.size() - 1;
  }

  std::uint8_t type_bit(const json& name, const std::string& pointer) const {
    if (!name.is_string()) fail(pointer, "a type must be a string, not " + json_kind(name));
    const auto& s = name.get_ref<const std::string&>();
    if (s == "null") return kNull;
    if (s == "boolean") return kBoolean;
    if (s == "object") return kObject;
    if (s == "array") return kArray;
    if (s == "number") return kNumber;
    if (s == "string") return kString;
    if (s == "integer") return kInteger;
    fail(pointer, "unknown type \"" + s + "\" (null, boolean, object, array, number, string or integer)");
  }

  void compile_ref(const json& value, const std::string& pointer, std::size_t depth, Node& node) {
    if (!value.is_string()) fail(pointer, "must be a string, not " + json_kind(value));
    const auto& ref = value.get_ref<const std::string&>();
    const auto segments = parse_fragment_pointer(ref);
    if (!segments) {
      if (!ref.empty() && ref[0] == '#') {
        fail(pointer, "only local JSON pointer references (\"#\", \"#/$defs/name\") are supported, not \"" + ref + "\"");
      }
      fail(pointer, "remote references are not supported (\"" + ref + "\"): use \"#/$defs/name\"");
    }
    const json* target = resolve_pointer(*root_, *segments);
    if (target == nullptr) fail(pointer, "the reference \"" + ref + "\" points to nothing in the schema");
    node.ref = compile(*target, pointer_of(*segments), depth + 1);
  }

  void compile_object(const json& schema, const std::string& pointer, std::size_t depth, Node& node) {
    for (const auto& [keyword, value] : schema.items()) {
      for (const RefusedKeyword& r : kRefusedKeywords) {
        if (keyword == r.keyword) fail(append_pointer(pointer, keyword), std::string(r.reason));
      }
    }
    if (const auto it = schema.find("$ref"); it != schema.end()) {
      compile_ref(*it, append_pointer(pointer, "$ref"), depth, node);
      if (draft7_) {
        // Draft 7 and before: "All other properties in a "$ref" object MUST be ignored."
        node.ref_only = true;
        return;
      }
    }
    const json* items = nullptr;
    const json* prefix_items = nullptr;
    const json* additional_items = nullptr;
    for (const auto& [keyword, value] : schema.items()) {
      const std::string at = append_pointer(pointer, keyword);
      if (keyword == "$ref") continue;
      if (keyword == "type") {
        if (value.is_array()) {
          if (value.empty()) fail(at, "must name at least one type");
          for (std::size_t i = 0; i < value.size(); ++i) node.types |= type_bit(value[i], append_pointer(at, i));
        } else {
          node.types = type_bit(value, at);
        }
      } else if (keyword == "enum") {
        if (!value.is_array()) fail(at, "must be an array, not " + json_kind(value));
        node.enum_values = std::vector<json>(value.begin(), value.end());
      } else if (keyword == "const") {
        node.const_value = value;
      } else if (keyword == "minimum") {
        node.minimum = number(value, at);
      } else if (keyword == "maximum") {
        node.maximum = number(value, at);
      } else if (keyword == "exclusiveMinimum") {
        node.exclusive_minimum = number(value, at);
      } else if (keyword == "exclusiveMaximum") {
        node.exclusive_maximum = number(value, at);
      } else if (keyword == "multipleOf") {
        node.multiple_of = number(value, at);
        if (node.multiple_of->get<double>() <= 0) fail(at, "must be greater than 0");
      } else if (keyword == "minLength") {
        node.min_length = non_negative_integer(value, at);
      } else if (keyword == "maxLength") {
        node.max_length = non_negative_integer(value, at);
      } else if (keyword == "pattern") {
        node.pattern = pattern(value, at);
      } else if (keyword == "format") {
        // An annotation only (keywords.hpp): its value is checked, the format is not.
        if (!value.is_string()) fail(at, "must be a string, not " + json_kind(value));
      } else if (keyword == "items") {
        items = &value;
      } else if (keyword == "prefixItems") {
        prefix_items = &value;
      } else if (keyword == "additionalItems") {
        additional_items = &value;
      } else if (keyword == "minItems") {
        node.min_items = non_negative_integer(value, at);
      } else if (keyword == "maxItems") {
        node.max_items = non_negative_integer(value, at);
      } else if (keyword == "uniqueItems") {
        if (!value.is_boolean()) fail(at, "must be a boolean, not " + json_kind(value));
        node.unique_items = value.get<bool>();
      } else if (keyword == "contains") {
        node.contains = child(value, at, depth);
      } else if (keyword == "minContains") {
        node.min_contains = non_negative_integer(value, at);
      } else if (keyword == "maxContains") {
        node.max_contains = non_negative_integer(value, at);
      } else if (keyword == "properties") {
        if (!value.is_object()) fail(at, "must be an object of schemas, not " + json_kind(value));
        for (const auto& [name, sub] : value.items()) {
          node.properties.emplace_back(name, child(sub, append_pointer(at, name), depth));
        }
      } else if (keyword == "patternProperties") {
        if (!value.is_object()) fail(at, "must be an object of schemas, not " + json_kind(value));
        for (const auto& [source, sub] : value.items()) {
          const std::string sub_at = append_pointer(at, source);
          const std::size_t p = compile_pattern(source, sub_at);
          node.pattern_properties.emplace_back(p, child(sub, sub_at, depth));
        }
      } else if (keyword == "additionalProperties") {
        node.additional_properties = child(value, at, depth);
      } else if (keyword == "required") {
        node.required = string_array(value, at);
      } else if (keyword == "minProperties") {
        node.min_properties = non_negative_integer(value, at);
      } else if (keyword == "maxProperties") {
        node.max_properties = non_negative_integer(value, at);
      } else if (keyword == "dependencies") {
        // Draft 7: an array is dependentRequired, a schema dependentSchemas.
        if (!value.is_object()) fail(at, "must be an object, not " + json_kind(value));
        for (const auto& [name, dep] : value.items()) {
          const std::string dep_at = append_pointer(at, name);
          if (dep.is_array()) {
            node.dependent_required.emplace_back(name, string_array(dep, dep_at));
            node.dependent_required_keyword = "dependencies";
          } else {
            node.dependent_schemas.emplace_back(name, child(dep, dep_at, depth));
            node.dependent_schemas_keyword = "dependencies";
          }
        }
      } else if (keyword == "dependentRequired") {
        if (!value.is_object()) fail(at, "must be an object of string arrays, not " + json_kind(value));
        for (const auto& [name, dep] : value.items()) {
          node.dependent_required.emplace_back(name, string_array(dep, append_pointer(at, name)));
        }
        node.dependent_required_keyword = "dependentRequired";
      } else if (keyword == "dependentSchemas") {
        if (!value.is_object()) fail(at, "must be an object of schemas, not " + json_kind(value));
        for (const auto& [name, dep] : value.items()) {
          node.dependent_schemas.emplace_back(name, child(dep, append_pointer(at, name), depth));
        }
        node.dependent_schemas_keyword = "dependentSchemas";
      } else if (keyword == "propertyNames") {
        node.property_names = child(value, at, depth);
      } else if (keyword == "allOf") {
        node.all_of = schema_array(value, at, depth, true);
      } else if (keyword == "anyOf") {
        node.any_of = schema_array(value, at, depth, true);
      } else if (keyword == "oneOf") {
        node.one_of = schema_array(value, at, depth, true);
      } else if (keyword == "not") {
        node.not_schema = child(value, at, depth);
      } else if (keyword == "if") {
        node.if_schema = child(value, at, depth);
      } else if (keyword == "then") {
        node.then_schema = child(value, at, depth);
      } else if (keyword == "else") {
        node.else_schema = child(value, at, depth);
      } else if (keyword == "$defs" || keyword == "definitions") {
        // Compiled even when nothing refers to them, so a broken definition is reported.
        if (!value.is_object()) fail(at, "must be an object of schemas, not " + json_kind(value));
        for (const auto& [name, sub] : value.items()) child(sub, append_pointer(at, name), depth);
      }
      // Anything else is an annotation (kAnnotationKeywords) or a keyword unknown to JSON Schema, which
      // the specification says to ignore.
    }
    std::sort(node.properties.begin(), node.properties.end());
    compile_array_keywords(items, prefix_items, additional_items, pointer, depth, node);
  }

  // items (schema or draft-7 tuple), prefixItems (2020-12 tuple) and additionalItems become one
  // tuple and one schema for the items after it.
  void compile_array_keywords(const json* items, const json* prefix_items, const json* additional_items,
                              const std::string& pointer, std::size_t depth, Node& node) {
    const std::string items_at = append_pointer(pointer, "items");
    const std::string prefix_at = append_pointer(pointer, "prefixItems");
    const std::string additional_at = append_pointer(pointer, "additionalItems");
    if (prefix_items != nullptr) {
      node.tuple = schema_array(*prefix_items, prefix_at, depth, false);
      if (items != nullptr) {
        if (items->is_array()) fail(items_at, "must be a schema when prefixItems is present");
        node.rest_items = child(*items, items_at, depth);
        node.rest_items_keyword = "items";
      } else if (additional_items != nullptr) {
        node.rest_items = child(*additional_items, additional_at, depth);
        node.rest_items_keyword = "additionalItems";
      }
      if (items != nullptr && additional_items != nullptr) child(*additional_items, additional_at, depth);
      return;
    }
    if (items != nullptr && items->is_array()) {
      node.tuple = schema_array(*items, items_at, depth, false);
      if (additional_items != nullptr) {
        node.rest_items = child(*additional_items, additional_at, depth);
        node.rest_items_keyword = "additionalItems";
      }
      return;
    }
    if (items != nullptr) {
      node.rest_items = child(*items, items_at, depth);
      node.rest_items_keyword = "items";
    }
    // additionalItems without a tuple applies to nothing; still checked to be a schema.
    if (additional_items != nullptr) child(*additional_items, additional_at, depth);
  }

  Program& program_;
  const json* root_ = &program_.source;
  std::string where_;
  bool draft7_;
  std::unordered_map<std::string, NodeIndex> by_pointer_;
};

bool names_draft7_or_before(const json& schema) {
  if (!schema.is_object()) return false;
  const auto it = schema.find("$schema");
  if (it == schema.end() || !it->is_string()) return false;
  const auto& uri = it->get_ref<const std::string&>();
  return uri.find("draft-07") != std::string::npos || uri.find("draft-06") != std::string::npos ||
         uri.find("draft-04") != std::string::npos || uri.find("draft-03") != std::string::npos;
}

bool names_2019_or_later(const json& schema) {
  if (!schema.is_object()) return false;
  const auto it = schema.find("$schema");
  if (it == schema.end() || !it->is_string()) return false;
  const auto& uri = it->get_ref<const std::string&>();
  return uri.find("2019-09") != std::string::npos || uri.find("2020-12") != std::string::npos;
}

}  // namespace

std::shared_ptr<const Program> compile_program(const json& schema, const std::string& where, bool draft7_default) {
  count_values(schema, 0, where);
  auto program = std::make_shared<Program>();
  program->source = schema;
  bool draft7 = draft7_default;
  if (names_draft7_or_before(schema)) draft7 = true;
  if (names_2019_or_later(schema)) draft7 = false;
  Compiler compiler(*program, where, draft7);
  compiler.compile(program->source, "", 0);
  return program;
}

}  // namespace overhead::schema::internal
