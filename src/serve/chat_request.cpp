#include "serve/chat_request.hpp"

#include <array>
#include <algorithm>
#include <string_view>

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& param, const std::string& what, const char* code = "invalid_type") {
  throw RequestError{{400, "'" + param + "' " + what, "invalid_request_error", param, code}};
}

constexpr std::array<std::string_view, 5> kRoles = {"system", "developer", "user", "assistant", "tool"};

// content: a string, or a list of parts each {"type":"text","text":string}; an assistant turn
// that carries tool_calls may leave it null.
void check_content(const Json& m, const std::string& param, std::string_view role) {
  const auto it = m.find("content");
  if (it == m.end() || it->is_null()) {
    if (role == "assistant" && m.contains("tool_calls")) return;
    throw RequestError{{400, "Missing required parameter: '" + param + ".content'", "invalid_request_error",
                        param + ".content", "missing_required_parameter"}};
  }
  if (it->is_string()) return;
  if (!it->is_array()) fail(param + ".content", "must be a string or an array of content parts");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& part = (*it)[i];
    const std::string p = param + ".content[" + std::to_string(i) + "]";
    if (!part.is_object()) fail(p, "must be an object");
    const auto type = part.find("type");
    if (type == part.end() || !type->is_string()) fail(p + ".type", "must be a string");
    if (*type != "text") fail(p + ".type", "must be 'text' (other content parts are not supported)", "unsupported_value");
    const auto text = part.find("text");
    if (text == part.end() || !text->is_string()) fail(p + ".text", "must be a string");
  }
}

std::optional<std::int64_t> optional_positive(const Json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 1) fail(name, "must be a positive integer");
  return it->get<std::int64_t>();
}

}  // namespace

ChatRequest parse_chat_request(const Json& body, std::size_t max_messages) {
  ChatRequest r;
  r.model = required_string(body, "model");
  const auto it = body.find("messages");
  if (it == body.end())
    throw RequestError{{400, "Missing required parameter: 'messages'", "invalid_request_error", "messages", "missing_required_parameter"}};
  if (!it->is_array() || it->empty()) fail("messages", "must be a non-empty array");
  if (it->size() > max_messages)
    fail("messages", "holds " + std::to_string(it->size()) + " messages; the limit is " + std::to_string(max_messages), "too_many_messages");
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) fail(param, "must be an object");
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string()) fail(param + ".role", "must be a string");
    const std::string role_name = role->get<std::string>();
    if (std::find(kRoles.begin(), kRoles.end(), role_name) == kRoles.end())
      fail(param + ".role", "must be one of system, developer, user, assistant, tool (got '" + role_name + "')", "invalid_value");
    check_content(m, param, role_name);
  }
  r.messages = *it;
  r.stream = optional_bool(body, "stream", false);
  if (const auto so = body.find("stream_options"); so != body.end() && !so->is_null()) {
    if (!so->is_object()) fail("stream_options", "must be an object");
    if (!r.stream) fail("stream_options", "is only allowed when 'stream' is true", "invalid_value");
    const auto iu = so->find("include_usage");
    if (iu != so->end() && !iu->is_null()) {
      if (!iu->is_boolean()) fail("stream_options.include_usage", "must be a boolean");
      r.include_usage = iu->get<bool>();
    }
  }
  r.max_tokens = optional_positive(body, "max_completion_tokens");
  if (!r.max_tokens) r.max_tokens = optional_positive(body, "max_tokens");
  if (const auto t = body.find("temperature"); t != body.end() && !t->is_null()) {
    if (!t->is_number() || t->get<double>() < 0 || t->get<double>() > 2) fail("temperature", "must be a number from 0 to 2");
  }
  return r;
}

}  // namespace overhead::serve
