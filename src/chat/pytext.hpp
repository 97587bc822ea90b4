// Python's text behaviour that templates observe: str()/repr() of values, float repr, json.dumps,
// str.isspace/strip, and case mapping. Rendering must match CPython byte for byte, so each rule here
// follows CPython's, with the limits noted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "chat/value.hpp"
#include "util/utf8.hpp"

namespace overhead::chat::py {

// The engine's UTF-8, from the one unit (util/utf8.hpp). Decoding is lenient: invalid bytes
// decode as themselves (Latin-1 style), since a template's own text is not validated; input
// reaching the engine has been validated as UTF-8 by the JSON parser.
inline char32_t next_code_point(std::string_view s, std::size_t& i) { return util::utf8::next_lenient(s, i); }
inline void append_utf8(std::string& out, char32_t cp) { util::utf8::append(out, cp); }
inline std::size_t code_point_count(std::string_view s) { return util::utf8::count_lenient(s); }

// str.isspace()
bool is_space(char32_t cp);
// str.strip()/lstrip()/rstrip() with chars=None (whitespace) or a set of characters.
std::string_view strip(std::string_view s, bool left, bool right);
std::string_view strip_chars(std::string_view s, std::string_view chars, bool left, bool right);

// str.upper()/lower() over ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic and full-width Latin.
char32_t to_upper(char32_t cp);
char32_t to_lower(char32_t cp);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
bool is_alnum(char32_t cp);

// repr(float): the shortest round-trip digits, fixed notation for exponents in [-4, 16).
void append_float(std::string& out, double x);
// str(x) and repr(x) as Jinja prints them (None, True, [1, 'a'], {'k': 'v'}, ...).
void append_str(std::string& out, const Value& v);
void append_repr(std::string& out, const Value& v);
std::string to_str(const Value& v);
// The Python type name used in error messages: "str", "int", "list", "dict", ...
const char* type_name(const Value& v);

// json.dumps(v, ensure_ascii=False, indent=indent, separators=..., sort_keys=False).
// indent_text is nullptr for indent=None. Throws EvalError for values JSON cannot hold.
struct JsonStyle {
  const std::string* indent = nullptr;  // nullptr: single line
  std::string_view item_separator = ", ";
  std::string_view key_separator = ": ";
  bool sort_keys = false;
  bool ensure_ascii = false;  // \uXXXX for non-ASCII, as json.dumps(ensure_ascii=True)
};
void append_json(std::string& out, const Value& v, const JsonStyle& style, int depth = 0);

}  // namespace overhead::chat::py
