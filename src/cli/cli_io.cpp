#include "cli/cli_io.hpp"

#include <iostream>

#include "util/line_reader.hpp"

namespace overhead::cli {

void for_each_line(const std::string& path,
                   const std::function<void(std::size_t, std::string_view)>& fn) {
  if (path == "-") {
    std::string line;
    std::size_t n = 0;
    while (std::getline(std::cin, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      fn(++n, line);
    }
    return;
  }
  util::LineReader reader(path);
  std::string line;
  while (reader.next(line)) fn(reader.line_number(), line);
}

bool string_field(simdjson::ondemand::parser& parser, std::string_view line, std::size_t line_number,
                  const std::string& field, std::string& value, std::string& error) {
  const std::string prefix = "line " + std::to_string(line_number) + ": ";
  simdjson::padded_string padded(line);
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(padded).get(doc); err) {
    error = prefix + "invalid JSON (" + simdjson::error_message(err) + ")";
    return false;
  }
  simdjson::ondemand::object obj;
  if (auto err = doc.get_object().get(obj); err) {
    error = prefix + "not a JSON object";
    return false;
  }
  simdjson::ondemand::value v;
  if (auto err = obj.find_field_unordered(field).get(v); err) {
    error = prefix + (err == simdjson::NO_SUCH_FIELD ? "missing field \"" + field + "\""
                                                     : "invalid JSON (" + std::string(simdjson::error_message(err)) + ")");
    return false;
  }
  std::string_view s;
  if (auto err = v.get_string().get(s); err) {
    error = prefix + "field \"" + field + "\" is not a string";
    return false;
  }
  value.assign(s);
  return true;
}

}  // namespace overhead::cli
