#include "serve/multipart.hpp"

#include <cctype>
#include <stdexcept>

namespace overhead::serve {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The value of `key=` in a header's parameters ("form-data; name=\"file\"; filename=\"x\""),
// quoted or not.
std::optional<std::string> parameter(std::string_view header, std::string_view key) {
  const std::string low = lower(header);
  std::size_t at = 0;
  for (;;) {
    at = low.find(std::string(key) + "=", at);
    if (at == std::string::npos) return std::nullopt;
    // A whole parameter name: at the start or after ';' or a space ("filename=" is not "name=").
    if (at == 0 || low[at - 1] == ';' || low[at - 1] == ' ' || low[at - 1] == '\t') break;
    at += key.size();
  }
  std::size_t v = at + key.size() + 1;
  if (v < header.size() && header[v] == '"') {
    const std::size_t end = header.find('"', v + 1);
    if (end == std::string::npos) return std::nullopt;
    return std::string(header.substr(v + 1, end - v - 1));
  }
  const std::size_t end = header.find(';', v);
  std::string_view value = header.substr(v, end == std::string::npos ? std::string_view::npos : end - v);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return std::string(value);
}

}  // namespace

std::vector<FormPart> parse_multipart(std::string_view content_type, std::string_view body) {
  if (lower(content_type).rfind("multipart/form-data", 0) != 0)
    throw std::invalid_argument("the body must be multipart/form-data (Content-Type: " + std::string(content_type) + ")");
  const auto boundary = parameter(content_type, "boundary");
  if (!boundary || boundary->empty() || boundary->size() > 200) throw std::invalid_argument("no boundary in the Content-Type");
  const std::string delimiter = "--" + *boundary;
  std::vector<FormPart> parts;
  std::size_t at = body.find(delimiter);
  if (at == std::string_view::npos) throw std::invalid_argument("the body holds no part (no boundary line)");
  for (;;) {
    at += delimiter.size();
    if (body.substr(at, 2) == "--") return parts;  // the closing delimiter
    if (body.substr(at, 2) != "\r\n") throw std::invalid_argument("a boundary line not followed by CRLF");
    at += 2;
    const std::size_t headers_end = body.find("\r\n\r\n", at);
    if (headers_end == std::string_view::npos) throw std::invalid_argument("a part without the blank line after its headers");
    FormPart part;
    bool named = false;
    for (std::size_t line = at; line < headers_end + 2;) {
      const std::size_t eol = body.find("\r\n", line);
      const std::string_view header = body.substr(line, eol - line);
      if (lower(header.substr(0, 20)).rfind("content-disposition:", 0) == 0) {
        if (auto name = parameter(header, "name")) {
          part.name = *name;
          named = true;
        }
        part.filename = parameter(header, "filename");
      }
      line = eol + 2;
    }
    if (!named) throw std::invalid_argument("a part without a name in its Content-Disposition");
    const std::size_t content = headers_end + 4;
    const std::size_t next = body.find("\r\n" + delimiter, content);
    if (next == std::string_view::npos) throw std::invalid_argument("the body does not end with the closing boundary");
    part.content = body.substr(content, next - content);
    parts.push_back(std::move(part));
    at = next + 2;
  }
}

}  // namespace overhead::serve
