// The compiled form of a schema, shared by the compiler (compiler.cpp) and the validator
// (validator.cpp); not part of the module's interface (compiled_schema.hpp is).
//
// A schema document becomes a flat vector of Nodes, one per subschema location, that refer to
// each other by index: `$ref` is resolved once, at compile time, to the index of its target, so a
// recursive reference is a cycle of indices and validation never looks a pointer up. Each keyword
// of a node is already checked and in the form the validator wants (type names as a bit set,
// `items` / `prefixItems` / `additionalItems` as one tuple and one rest schema, patterns compiled).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schema/pattern.hpp"

namespace overhead::schema {
struct ValidationError;
}

namespace overhead::schema::internal {

using NodeIndex = std::int32_t;
inline constexpr NodeIndex kNone = -1;

// Bits of Node::types.
enum TypeBit : std::uint8_t {
  kNull = 1,
  kBoolean = 2,
  kObject = 4,
  kArray = 8,
  kNumber = 16,  // any number; implies integer
  kString = 32,
  kInteger = 64,
};

struct Node {
  std::string pointer;          // where the subschema is in the schema document ("" = the root)
  bool is_boolean = false;      // `true` or `false` as a schema
  bool boolean_value = true;
  NodeIndex ref = kNone;        // $ref target
  bool ref_only = false;        // draft 7 and before: keywords beside $ref are ignored

  std::uint8_t types = 0;       // 0: no `type` keyword
  std::optional<std::vector<nlohmann::json>> enum_values;
  std::optional<nlohmann::json> const_value;

  // numbers (each a JSON number)
  std::optional<nlohmann::json> minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;

  // strings
  std::optional<std::size_t> min_length, max_length;  // code points
  std::optional<std::size_t> pattern;                  // index into Program::patterns

  // arrays: items 0..tuple.size()-1 against tuple, the rest against rest_items
  std::vector<NodeIndex> tuple;
  NodeIndex rest_items = kNone;
  std::string rest_items_keyword;  // "items", "additionalItems": for the schema path
  std::optional<std::size_t> min_items, max_items;
  bool unique_items = false;
  NodeIndex contains = kNone;
  std::optional<std::size_t> min_contains, max_contains;

  // objects
  std::vector<std::pair<std::string, NodeIndex>> properties;  // sorted by name
  std::vector<std::pair<std::size_t, NodeIndex>> pattern_properties;  // (pattern index, schema)
  NodeIndex additional_properties = kNone;
  std::vector<std::string> required;
  std::optional<std::size_t> min_properties, max_properties;
  std::vector<std::pair<std::string, std::vector<std::string>>> dependent_required;
  std::vector<std::pair<std::string, NodeIndex>> dependent_schemas;
  std::string dependent_schemas_keyword;  // "dependencies" or "dependentSchemas"
  std::string dependent_required_keyword;  // "dependencies" or "dependentRequired"
  NodeIndex property_names = kNone;

  // combinators
  std::vector<NodeIndex> all_of, any_of, one_of;
  NodeIndex not_schema = kNone;
  NodeIndex if_schema = kNone, then_schema = kNone, else_schema = kNone;
};

struct Program {
  nlohmann::json source;                          // the schema as given
  std::vector<Node> nodes;                        // nodes[0] is the root
  std::vector<std::unique_ptr<Pattern>> patterns;
};

// Compiles `schema` (compiler.cpp). `where` prefixes the pointers of errors; `draft7_default`
// picks the $ref rule when the root has no `$schema`.
std::shared_ptr<const Program> compile_program(const nlohmann::json& schema, const std::string& where,
                                               bool draft7_default);

// Validates `instance` against `program` (validator.cpp), appending at most max_errors (>= 1)
// errors to `out`.
void validate_program(const Program& program, const nlohmann::json& instance, std::size_t max_errors,
                      std::vector<ValidationError>& out);

}  // namespace overhead::schema::internal
