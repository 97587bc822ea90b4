#include "serve/reply_codec.hpp"

#include <stdexcept>
#include <variant>

#include <nlohmann/json.hpp>

#include "pipe/record_codec.hpp"

namespace overhead::serve {
namespace {

constexpr std::string_view kFailedPrefix = "{\"failed\":";

}  // namespace

std::string encode_reply(const Reply& reply) {
  if (reply.ok) {
    std::string out;
    pipe::append_record_json(out, reply.record);
    return out;
  }
  // Refusals are rare and small: written and read (below) with the DOM library.
  // A reason may quote the request's bytes: ill-formed UTF-8 is replaced rather than thrown on.
  return nlohmann::json{{"failed", {{"id", reply.id}, {"kind", reply.error_kind}, {"reason", reply.error_reason}}}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Reply decode_reply(std::string_view body, const std::string& origin) {
  if (body.starts_with(kFailedPrefix)) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    const auto found = j.is_object() ? j.find("failed") : j.end();  // find: a const operator[] must not miss
    const nlohmann::json* f = found != j.end() ? &*found : nullptr;
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
