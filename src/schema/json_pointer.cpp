#include "schema/json_pointer.hpp"

#include <charconv>

namespace overhead::schema {

std::string escape_pointer_segment(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (const char c : segment) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string append_pointer(std::string_view pointer, std::string_view segment) {
  std::string out(pointer);
  out += '/';
  out += escape_pointer_segment(segment);
  return out;
}

std::string append_pointer(std::string_view pointer, std::size_t index) {
  std::string out(pointer);
  out += '/';
  out += std::to_string(index);
  return out;
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::vector<std::string>> parse_fragment_pointer(std::string_view ref) {
  if (ref.empty() || ref[0] != '#') return std::nullopt;
  std::string decoded;  // percent-decoded fragment, after the '#'
  for (std::size_t i = 1; i < ref.size(); ++i) {
    if (ref[i] != '%') {
      decoded += ref[i];
      continue;
    }
    if (i + 2 >= ref.size()) return std::nullopt;
    const int hi = hex_value(ref[i + 1]);
    const int lo = hex_value(ref[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    decoded += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  std::vector<std::string> segments;
  if (decoded.empty()) return segments;
  if (decoded[0] != '/') return std::nullopt;  // `#name`: an anchor, not a pointer
  std::string current;
  for (std::size_t i = 1; i <= decoded.size(); ++i) {
    if (i == decoded.size() || decoded[i] == '/') {
      segments.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (decoded[i] == '~') {
      if (i + 1 >= decoded.size()) return std::nullopt;
      if (decoded[i + 1] == '0') {
        current += '~';
      } else if (decoded[i + 1] == '1') {
        current += '/';
      } else {
        return std::nullopt;
      }
      ++i;
      continue;
    }
    current += decoded[i];
  }
  return segments;
}

const nlohmann::json* resolve_pointer(const nlohmann::json& document, const std::vector<std::string>& segments) {
  const nlohmann::json* at = &document;
  for (const std::string& segment : segments) {
    if (at->is_object()) {
      const auto it = at->find(segment);
      if (it == at->end()) return nullptr;
      at = &*it;
    } else if (at->is_array()) {
      if (segment.empty() || (segment.size() > 1 && segment[0] == '0')) return nullptr;
      std::size_t index = 0;
      const auto [end, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), index);
      if (ec != std::errc{} || end != segment.data() + segment.size() || index >= at->size()) return nullptr;
      at = &(*at)[index];
    } else {
      return nullptr;
    }
  }
  return at;
}

std::string pointer_of(const std::vector<std::string>& segments) {
  std::string out;
  for (const std::string& s : segments) out = append_pointer(out, s);
  return out;
}

}  // namespace overhead::schema
