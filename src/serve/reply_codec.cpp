#include "serve/reply_codec.hpp"

#include <stdexcept>
#include <variant>

#include <nlohmann/json.hpp>

#include "pipe/record_codec.hpp"
#include "util/json_writer.hpp"

namespace overhead::serve {
namespace {

constexpr std::string_view kFailedPrefix = "{\"failed\":";

}  // namespace

std::string encode_reply(const Reply& reply) {
  std::string out;
  if (reply.ok) {
    pipe::append_record_json(out, reply.record);
    return out;
  }
  out += kFailedPrefix;
  out += "{\"id\":";
  util::append_json_string(out, reply.id);
  out += ",\"kind\":";
  util::append_json_string(out, reply.error_kind);
  out += ",\"reason\":";
  util::append_json_string(out, reply.error_reason);
  out += "}}";
  return out;
}

Reply decode_reply(std::string_view body, const std::string& origin) {
  if (body.starts_with(kFailedPrefix)) {
    // Refusals are rare and small: the DOM parser is fine here.
    const auto j = nlohmann::json::parse(body, nullptr, false);
    const nlohmann::json* f = j.is_object() ? &j["failed"] : nullptr;
    if (!f || !f->is_object() || !f->contains("id") || !(*f)["id"].is_string())
      throw std::runtime_error(origin + ": a failed reply without a string \"id\"");
    Reply r;
    r.id = (*f)["id"].get<std::string>();
    r.error_kind = f->value("kind", std::string("processing_error"));
    r.error_reason = f->value("reason", std::string());
    return r;
  }
  auto message = pipe::parse_log_message(body, origin);
  auto* record = std::get_if<pipe::Record>(&message);
  if (!record) throw std::runtime_error(origin + ": a stamp patch is not a reply");
  Reply r;
  r.id = record->id;
  r.ok = true;
  r.record = std::move(*record);
  return r;
}

}  // namespace overhead::serve
