#include "reply/reply_codec.hpp"

#include <stdexcept>

#include <simdjson.h>

#include "ports/record_codec.hpp"
#include "reply/body_lines.hpp"
#include "util/json_writer.hpp"
#include "util/utf8.hpp"

namespace overhead::reply {
namespace {

namespace dom = simdjson::dom;

dom::parser& thread_parser() {
  thread_local dom::parser parser;
  return parser;
}

// A reason may quote a request's bytes, and a text is whatever the engine sent: ill-formed UTF-8
// is replaced so that the reader's strict parser takes the line.
void append_text(std::string& out, std::string_view s) {
  if (util::utf8::is_valid(s)) {
    util::append_json_string(out, s);
  } else {
    util::append_json_string(out, util::utf8::repair(s));
  }
}

void start_line(std::string& body) {
  if (!body.empty()) body += '\n';
}

std::string string_field(dom::object o, const char* name) {
  std::string_view s;
  if (o[name].get(s) != simdjson::SUCCESS) return {};
  return std::string(s);
}

std::int64_t int_field(dom::object o, const char* name) {
  std::int64_t v = 0;
  if (o[name].get(v) != simdjson::SUCCESS) return 0;
  return v;
}

// One line; throws std::runtime_error (without the origin) when it is no event.
ReplyEvent decode_line(std::string_view line, const std::string& where) {
  dom::element doc;
  if (auto err = thread_parser().parse(line.data(), line.size(), true).get(doc); err)
    throw std::runtime_error(std::string("invalid JSON (") + simdjson::error_message(err) + ")");
  dom::object top;
  if (doc.get(top) != simdjson::SUCCESS) throw std::runtime_error("not a JSON object");
  dom::object inner;
  if (top["delta"].get(inner) == simdjson::SUCCESS) {
    Delta d;
    if (inner["id"].get_string().error() != simdjson::SUCCESS) throw std::runtime_error("a delta without a string \"id\"");
    d.id = string_field(inner, "id");
    d.attempt = string_field(inner, "attempt");
    d.offset = int_field(inner, "offset");
    d.text = string_field(inner, "text");
    if (d.offset < 0) throw std::runtime_error("a delta with a negative offset");
    return d;
  }
  if (top["failed"].get(inner) == simdjson::SUCCESS) {
    if (inner["id"].get_string().error() != simdjson::SUCCESS) throw std::runtime_error("a failed reply without a string \"id\"");
    Reply r = Reply::refused(string_field(inner, "id"), string_field(inner, "kind"), string_field(inner, "reason"));
    if (r.error_kind.empty()) r.error_kind = "processing_error";
    return r;
  }
  if (top["taken"].get(inner) == simdjson::SUCCESS) {
    Taken t;
    if (inner["id"].get_string().error() != simdjson::SUCCESS) throw std::runtime_error("a taken event without a string \"id\"");
    t.id = string_field(inner, "id");
    t.control = string_field(inner, "control");
    return t;
  }
  if (top["done"].get(inner) == simdjson::SUCCESS) {
    dom::element record;
    if (top["record"].get(record) != simdjson::SUCCESS) throw std::runtime_error("a done reply without its record");
    auto message = ports::parse_log_message(simdjson::minify(record), where);
    auto* rec = std::get_if<ports::Record>(&message);
    if (!rec) throw std::runtime_error("a done reply whose record is a stamp patch");
    Reply r = Reply::answered(std::move(*rec), string_field(inner, "text"), string_field(inner, "finish_reason"),
                              string_field(inner, "attempt"));
    r.text_bytes = int_field(inner, "text_bytes");
    r.decoder = string_field(inner, "decoder");
    if (r.id.empty()) r.id = string_field(inner, "id");
    return r;
  }
  // A bare record: a worker that answers the way it did before deltas existed.
  auto message = ports::parse_log_message(line, where);
  auto* rec = std::get_if<ports::Record>(&message);
  if (!rec) throw std::runtime_error("a stamp patch is not a reply");
  return Reply::answered(std::move(*rec), {}, {});
}

}  // namespace

void append_delta(std::string& body, std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text) {
  start_line(body);
  body += "{\"delta\":{\"id\":";
  util::append_json_string(body, id);
  body += ",\"attempt\":";
  util::append_json_string(body, attempt);
  body += ",\"offset\":";
  body += std::to_string(offset);
  body += ",\"text\":";
  append_text(body, text);
  body += "}}";
}

void append_taken(std::string& body, std::string_view id, std::string_view control) {
  start_line(body);
  body += "{\"taken\":{\"id\":";
  util::append_json_string(body, id);
  body += ",\"control\":";
  util::append_json_string(body, control);
  body += "}}";
}

void extend_last_delta(std::string& body, std::string_view text) {
  // The line ends `..."text":"<escaped>"}}`: reopen the string, append, close it again.
  body.resize(body.size() - 3);
  const std::size_t at = body.size();
  append_text(body, text);  // `"<escaped>"`: drop its two quotes
  body.erase(at, 1);
  body.back() = '"';
  body += "}}";
}

void append_reply(std::string& body, const Reply& reply, bool with_text) {
  start_line(body);
  if (!reply.ok()) {
    body += "{\"failed\":{\"id\":";
    util::append_json_string(body, reply.id);
    body += ",\"kind\":";
    append_text(body, reply.error_kind);
    body += ",\"reason\":";
    append_text(body, reply.error_reason);
    body += "}}";
    return;
  }
  body += "{\"done\":{\"id\":";
  util::append_json_string(body, reply.id);
  body += ",\"attempt\":";
  util::append_json_string(body, reply.attempt);
  body += ",\"finish_reason\":";
  append_text(body, reply.finish_reason);
  body += ",\"text_bytes\":";
  body += std::to_string(reply.text_bytes);
  if (!reply.decoder.empty()) {
    body += ",\"decoder\":";
    append_text(body, reply.decoder);
  }
  if (with_text) {
    body += ",\"text\":";
    append_text(body, reply.text);
  }
  body += "},\"record\":";
  ports::append_record_json(body, reply.record);
  body += "}";
}

std::vector<std::string> decode_events(std::string_view body, const std::string& origin,
                                       const std::function<void(ReplyEvent&&)>& on_event) {
  std::vector<std::string> errors;
  for_each_body_line(body, origin, [&](std::string_view line, const std::string& where) {
    try {
      on_event(decode_line(line, where));
    } catch (const std::exception& e) {
      const std::string what = e.what();
      errors.push_back(what.starts_with(where) ? what : where + ": " + what);
    }
  });
  return errors;
}

}  // namespace overhead::reply
