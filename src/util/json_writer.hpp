// Minimal, fast JSON output helpers for the hot paths (one line per item), and the project's one
// JSON string escaper; anything richer uses nlohmann::json.
//
// The escaper has two users with different rules, expressed as options of one function:
//   - this project's JSON lines (records, queue bodies, dead letters, tokenize/template output):
//     UTF-8 kept as is, control characters and DEL escaped (kJsonLines, the default);
//   - the template engine's `tojson`, which must match Python's json.dumps byte for byte:
//     DEL kept as is, or with ensure_ascii=True every code point outside printable ASCII as \uXXXX
//     (kPythonJsonDumps, kPythonJsonDumpsAscii).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace overhead::util {

struct JsonStringStyle {
  // json.dumps(ensure_ascii=True): every code point outside ' '..'~' as \uXXXX (lower-case hex, a
  // surrogate pair above U+FFFF). Ill-formed bytes decode as themselves (util::utf8::next_lenient),
  // so they come out as \u0080..\u00ff. Off: UTF-8 is copied byte for byte.
  bool ensure_ascii = false;
  // Without ensure_ascii: U+007F as \u007f. Our JSON lines escape it (a terminal control
  // character); Python's json.dumps(ensure_ascii=False) keeps it.
  bool escape_del = true;
};

inline constexpr JsonStringStyle kJsonLines{false, true};
inline constexpr JsonStringStyle kPythonJsonDumps{false, false};
inline constexpr JsonStringStyle kPythonJsonDumpsAscii{true, false};

// Appends `s` as a JSON string literal (with quotes). `"`, `\` and the control characters below
// U+0020 are always escaped (\n \r \t \b \f by name, the others as \u00XX), as json.dumps does.
void append_json_string(std::string& out, std::string_view s, JsonStringStyle style = kJsonLines);
// Appends `[1,2,3]`.
void append_json_ids(std::string& out, std::span<const std::uint32_t> ids);

}  // namespace overhead::util
