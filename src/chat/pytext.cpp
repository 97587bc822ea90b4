#include "chat/pytext.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util/json_writer.hpp"

namespace overhead::chat::py {

bool is_space(char32_t cp) {
  // CPython's _PyUnicode_IsWhitespace: bidirectional types WS, B, S plus Zs.
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x1F);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

namespace {
// Length in bytes of the UTF-8 sequence that ends at s[end-1].
std::size_t last_cp_start(std::string_view s, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0u) == 0x80u && end - start < 4) --start;
  return start;
}

template <typename Pred>
std::string_view strip_if(std::string_view s, bool left, bool right, Pred pred) {
  std::size_t b = 0, e = s.size();
  if (left) {
    while (b < e) {
      std::size_t j = b;
      if (!pred(next_code_point(s, j))) break;
      b = j;
    }
  }
  if (right) {
    while (e > b) {
      const std::size_t start = last_cp_start(s, e);
      std::size_t j = start;
      if (!pred(next_code_point(s, j))) break;
      e = start;
    }
  }
  return s.substr(b, e - b);
}
}  // namespace

std::string_view strip(std::string_view s, bool left, bool right) {
  return strip_if(s, left, right, [](char32_t cp) { return is_space(cp); });
}

std::string_view strip_chars(std::string_view s, std::string_view chars, bool left, bool right) {
  return strip_if(s, left, right, [chars](char32_t cp) {
    for (std::size_t i = 0; i < chars.size();)
      if (next_code_point(chars, i) == cp) return true;
    return false;
  });
}

char32_t to_upper(char32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (c >= 0x100 && c <= 0x137 && (c & 1)) return c - 1;
  if (c >= 0x139 && c <= 0x148 && !(c & 1)) return c - 1;
  if (c >= 0x14A && c <= 0x177 && (c & 1)) return c - 1;
  if (c == 0x17A || c == 0x17C || c == 0x17E) return c - 1;
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  if (c >= 0xFF41 && c <= 0xFF5A) return c - 32;
  return c;
}

char32_t to_lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x137 && !(c & 1)) return c + 1;
  if (c >= 0x139 && c <= 0x148 && (c & 1)) return c + 1;
  if (c >= 0x14A && c <= 0x177 && !(c & 1)) return c + 1;
  if (c == 0x179 || c == 0x17B || c == 0x17D) return c + 1;
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

namespace {
template <typename F>
std::string map_case(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = next_code_point(s, i);
    if (cp == 0xDF && f(U'a') == U'A') {  // 'ß'.upper() == 'SS'
      out += "SS";
      continue;
    }
    append_utf8(out, f(cp));
  }
  return out;
}
}  // namespace

std::string upper(std::string_view s) { return map_case(s, to_upper); }
std::string lower(std::string_view s) { return map_case(s, to_lower); }

bool is_alnum(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  // Letters of most scripts count; punctuation and symbols of the blocks below do not.
  if (c >= 0x2000 && c <= 0x2BFF) return false;
  if (c >= 0x3000 && c <= 0x303F) return false;
  if (c >= 0xFF00 && c <= 0xFF0F) return false;
  if (c >= 0xFF1A && c <= 0xFF20) return false;
  if (c >= 0xFF3B && c <= 0xFF40) return false;
  if (c >= 0xFF5B && c <= 0xFF65) return false;
  if (c >= 0x80 && c <= 0xBF) return c == 0xAA || c == 0xB5 || c == 0xBA || c == 0xB2 || c == 0xB3 || c == 0xB9;
  if (c == 0xD7 || c == 0xF7) return false;
  if (c >= 0x1F000) return false;
  return !is_space(c);
}

void append_float(std::string& out, double x) {
  if (std::isnan(x)) { out += "nan"; return; }
  if (std::isinf(x)) { out += x < 0 ? "-inf" : "inf"; return; }
  if (x == 0) { out += std::signbit(x) ? "-0.0" : "0.0"; return; }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<std::size_t>(r.ptr - buf));
  // sci = [-]d[.ddd]e[+-]XX
  const bool neg = sci[0] == '-';
  if (neg) sci.remove_prefix(1);
  const std::size_t epos = sci.find('e');
  std::string digits;
  for (std::size_t i = 0; i < epos; ++i)
    if (sci[i] != '.') digits.push_back(sci[i]);
  int exp = 0;
  std::from_chars(sci.data() + epos + (sci[epos + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exp);
  if (neg) out.push_back('-');
  const int nd = static_cast<int>(digits.size());
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-exp - 1), '0');
      out += digits;
    } else if (exp + 1 >= nd) {
      out += digits;
      out.append(static_cast<std::size_t>(exp + 1 - nd), '0');
      out += ".0";
    } else {
      out.append(digits, 0, static_cast<std::size_t>(exp + 1));
      out.push_back('.');
      out.append(digits, static_cast<std::size_t>(exp + 1));
    }
  } else {
    out.push_back(digits[0]);
    if (nd > 1) {
      out.push_back('.');
      out.append(digits, 1);
    }
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    out += eb;
  }
}

namespace {
bool repr_printable(char32_t c) {
  if (c < 0x20 || c == 0x7F) return false;
  if (c < 0x7F) return true;
  if (c <= 0xA0 || c == 0xAD) return false;
  if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) ||
      (c >= 0x205F && c <= 0x206F) || c == 0x3000 || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB))
    return false;
  if ((c >= 0x600 && c <= 0x605) || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x180E) return false;
  if ((c >= 0xD800 && c <= 0xF8FF) || c >= 0xF0000 || (c >= 0xE0000 && c <= 0xE007F)) return false;
  return true;
}

void append_repr_string(std::string& out, std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  out.push_back(quote);
  for (std::size_t i = 0; i < s.size();) {
    const char32_t c = next_code_point(s, i);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (repr_printable(c)) {
      append_utf8(out, c);
    } else {
      char buf[16];
      if (c < 0x100)
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      else if (c < 0x10000)
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      else
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
      out += buf;
    }
  }
  out.push_back(quote);
}

void append_int(std::string& out, std::int64_t x) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
}

void append_container(std::string& out, const Value& v) {
  if (v.kind == Kind::List) {
    const auto& l = as_list(v);
    out.push_back(l.is_tuple ? '(' : '[');
    for (std::size_t i = 0; i < l.items.size(); ++i) {
      if (i) out += ", ";
      append_repr(out, l.items[i]);
    }
    if (l.is_tuple && l.items.size() == 1) out.push_back(',');
    out.push_back(l.is_tuple ? ')' : ']');
  } else {
    const auto& d = as_dict(v);
    out.push_back('{');
    bool first = true;
    for (const auto& [k, val] : d.items) {
      if (!first) out += ", ";
      first = false;
      append_repr(out, k);
      out += ": ";
      append_repr(out, val);
    }
    out.push_back('}');
  }
}
}  // namespace

const char* type_name(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return as_list(v).is_tuple ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Callable: return "builtin_function_or_method";
    case Kind::Namespace: return "Namespace";
    case Kind::Loop: return "LoopContext";
  }
  return "object";
}

void append_str(std::string& out, const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return;
    case Kind::String: out.append(v.s); return;
    default: append_repr(out, v);
  }
}

void append_repr(std::string& out, const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return;
    case Kind::None: out += "None"; return;
    case Kind::Bool: out += v.b ? "True" : "False"; return;
    case Kind::Int: append_int(out, v.i); return;
    case Kind::Float: append_float(out, v.f); return;
    case Kind::String: append_repr_string(out, v.s); return;
    case Kind::List:
    case Kind::Dict: append_container(out, v); return;
    case Kind::Callable: out += "<built-in function>"; return;
    case Kind::Namespace: out += "<Namespace>"; return;
    case Kind::Loop: out += "<LoopContext>"; return;
  }
}

std::string to_str(const Value& v) {
  std::string out;
  append_str(out, v);
  return out;
}

namespace {
// json.dumps' string rule, from the one escaper (util/json_writer.hpp): with ensure_ascii every
// code point outside ' '..'~' (DEL included) as \uXXXX; without it DEL and non-ASCII kept.
void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  util::append_json_string(out, s, ensure_ascii ? util::kPythonJsonDumpsAscii : util::kPythonJsonDumps);
}

void json_newline(std::string& out, const JsonStyle& style, int depth) {
  out.push_back('\n');
  for (int i = 0; i < depth; ++i) out += *style.indent;
}

void append_json_key(std::string& out, const Value& k, bool ensure_ascii) {
  switch (k.kind) {
    case Kind::String: append_json_string(out, k.s, ensure_ascii); return;
    case Kind::None: out += "\"null\""; return;
    case Kind::Bool: out += k.b ? "\"true\"" : "\"false\""; return;
    case Kind::Int:
    case Kind::Float:
      out.push_back('"');
      append_repr(out, k);
      out.push_back('"');
      return;
    default:
      throw EvalError(std::string("keys must be str, int, float, bool or None, not ") + type_name(k));
  }
}
}  // namespace

void append_json(std::string& out, const Value& v, const JsonStyle& style, int depth) {
  if (depth > 200) throw EvalError("maximum recursion depth exceeded while encoding a JSON object");
  switch (v.kind) {
    case Kind::None: out += "null"; return;
    case Kind::Bool: out += v.b ? "true" : "false"; return;
    case Kind::Int: append_int(out, v.i); return;
    case Kind::Float:
      if (std::isnan(v.f)) out += "NaN";
      else if (std::isinf(v.f)) out += v.f < 0 ? "-Infinity" : "Infinity";
      else append_float(out, v.f);
      return;
    case Kind::String: append_json_string(out, v.s, style.ensure_ascii); return;
    case Kind::List: {
      const auto& l = as_list(v);
      if (l.items.empty()) { out += "[]"; return; }
      out.push_back('[');
      for (std::size_t i = 0; i < l.items.size(); ++i) {
        if (i) out += style.item_separator;
        if (style.indent) json_newline(out, style, depth + 1);
        append_json(out, l.items[i], style, depth + 1);
      }
      if (style.indent) json_newline(out, style, depth);
      out.push_back(']');
      return;
    }
    case Kind::Dict: {
      const auto& d = as_dict(v);
      if (d.items.empty()) { out += "{}"; return; }
      std::vector<const std::pair<Value, Value>*> order;
      order.reserve(d.items.size());
      for (const auto& kv : d.items) order.push_back(&kv);
      if (style.sort_keys) {
        std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) {
          if (a->first.kind != Kind::String || b->first.kind != Kind::String)
            throw EvalError("'<' not supported between instances of non-str keys");
          return a->first.s < b->first.s;
        });
      }
      out.push_back('{');
      bool first = true;
      for (const auto* kv : order) {
        if (!first) out += style.item_separator;
        first = false;
        if (style.indent) json_newline(out, style, depth + 1);
        append_json_key(out, kv->first, style.ensure_ascii);
        out += style.key_separator;
        append_json(out, kv->second, style, depth + 1);
      }
      if (style.indent) json_newline(out, style, depth);
      out.push_back('}');
      return;
    }
    default:
      throw EvalError(std::string("Object of type ") + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace overhead::chat::py
