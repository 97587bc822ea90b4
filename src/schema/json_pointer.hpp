// JSON Pointers (RFC 6901) as the schema module writes and reads them: the paths of errors (in
// the instance and in the schema) and the targets of local `$ref`s (`#/definitions/a`,
// `#/$defs/a~1b`, `#/percent%25field`, URI fragment encoding).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace overhead::schema {

// `segment` escaped for a pointer (`~` -> `~0`, `/` -> `~1`).
std::string escape_pointer_segment(std::string_view segment);

// `pointer` + "/" + the escaped segment.
std::string append_pointer(std::string_view pointer, std::string_view segment);
std::string append_pointer(std::string_view pointer, std::size_t index);

// The segments of a `$ref` that is a local fragment (`#` or `#/a/b`): percent-decoded, then
// unescaped. nullopt when `ref` is not of that form (a remote reference, an anchor `#name`, or a
// malformed escape).
std::optional<std::vector<std::string>> parse_fragment_pointer(std::string_view ref);

// The value at `segments` in `document`, or nullptr when there is none (an array segment must be
// a decimal index without leading zeros).
const nlohmann::json* resolve_pointer(const nlohmann::json& document, const std::vector<std::string>& segments);

// The pointer text of `segments` (the canonical form, without the leading '#').
std::string pointer_of(const std::vector<std::string>& segments);

}  // namespace overhead::schema
