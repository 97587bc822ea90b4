#include "util/json_writer.hpp"

#include <charconv>

namespace overhead::util {

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(ch);
        }
    }
  }
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
