// Minimal, fast JSON output helpers for the hot paths (one line per item); anything richer uses
// nlohmann::json.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace overhead::util {

// Appends `s` as a JSON string literal (with quotes). Non-ASCII UTF-8 is kept as is
// (like json.dumps(ensure_ascii=False)); control characters are escaped.
void append_json_string(std::string& out, std::string_view s);
// Appends `[1,2,3]`.
void append_json_ids(std::string& out, std::span<const std::uint32_t> ids);

}  // namespace overhead::util
