#include "util/json_writer.hpp"

#include <array>
#include <charconv>

#include "util/utf8.hpp"

namespace overhead::util {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_u_escape(std::string& out, unsigned unit) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out.push_back(kHex[(unit >> shift) & 15]);
}

// The escape of an ASCII byte that always needs one, or nullptr.
const char* named_escape(unsigned char c) {
  switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: return nullptr;
  }
}

void append_ascii_only(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const char32_t c = utf8::next_lenient(s, i);
    if (c < 0x80) {
      if (const char* e = named_escape(static_cast<unsigned char>(c))) out += e;
      else if (c < 0x20 || c == 0x7F) append_u_escape(out, c);
      else out.push_back(static_cast<char>(c));
    } else if (c < 0x10000) {
      append_u_escape(out, c);
    } else {
      const char32_t v = c - 0x10000;
      append_u_escape(out, 0xD800 + (v >> 10));
      append_u_escape(out, 0xDC00 + (v & 0x3FF));
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s, JsonStringStyle style) {
  out.push_back('"');
  if (style.ensure_ascii) {
    append_ascii_only(out, s);
    out.push_back('"');
    return;
  }
  // Runs of bytes that need no escape are copied in one append; a table lookup per byte is the
  // whole test (queue bodies are JSON inside JSON, so quotes are frequent and runs short).
  static constexpr auto kEscapes = [] {
    std::array<std::array<bool, 256>, 2> t{};  // [escape_del][byte]
    for (int del = 0; del < 2; ++del)
      for (int c = 0; c < 256; ++c) t[del][c] = c < 0x20 || c == '"' || c == '\\' || (c == 0x7F && del == 1);
    return t;
  }();
  const std::array<bool, 256>& escapes = kEscapes[style.escape_del ? 1 : 0];
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (!escapes[c]) continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    if (const char* e = named_escape(c)) out += e;
    else append_u_escape(out, c);
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

void append_json_ids(std::string& out, std::span<const std::uint32_t> ids) {
  out.push_back('[');
  char buf[16];
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) out.push_back(',');
    const auto r = std::to_chars(buf, buf + sizeof buf, ids[i]);
    out.append(buf, r.ptr);
  }
  out.push_back(']');
}

}  // namespace overhead::util
