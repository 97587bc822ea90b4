#include "reply/cancel_message.hpp"

#include <simdjson.h>

#include "reply/body_lines.hpp"
#include "util/json_writer.hpp"

namespace overhead::reply {

void append_cancel(std::string& body, std::string_view id) {
  if (!body.empty()) body += '\n';
  body += "{\"cancel\":{\"id\":";
  util::append_json_string(body, id);
  body += "}}";
}

std::vector<std::string> decode_cancels(std::string_view body, const std::string& origin,
                                        const std::function<void(std::string&& id)>& on_cancel) {
  thread_local simdjson::dom::parser parser;
  std::vector<std::string> errors;
  for_each_body_line(body, origin, [&](std::string_view line, const std::string& where) {
    simdjson::dom::element doc;
    if (auto err = parser.parse(line.data(), line.size(), true).get(doc); err) {
      errors.push_back(where + ": invalid JSON (" + simdjson::error_message(err) + ")");
      return;
    }
    std::string_view id;
    if (doc["cancel"]["id"].get(id) != simdjson::SUCCESS) {
      errors.push_back(where + ": not a cancel (expected {\"cancel\":{\"id\":\"...\"}})");
      return;
    }
    on_cancel(std::string(id));
  });
  return errors;
}

}  // namespace overhead::reply
