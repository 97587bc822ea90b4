// The lines of a reply-path message body, which carries one JSON event per line (replies, deltas,
// cancels): each non-empty line with its label "<origin> line N" for the error that names it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace overhead::reply {

template <class OnLine>  // void(std::string_view line, const std::string& where)
void for_each_body_line(std::string_view body, const std::string& origin, OnLine&& on_line) {
  std::size_t line_number = 0;
  while (!body.empty()) {
    const std::size_t end = body.find('\n');
    const std::string_view line = body.substr(0, end);
    body = end == std::string_view::npos ? std::string_view{} : body.substr(end + 1);
    ++line_number;
    if (!line.empty()) on_line(line, origin + " line " + std::to_string(line_number));
  }
}

}  // namespace overhead::reply
