#include "serve/token_routes.hpp"

#include "serve/http/routes.hpp"

#include <chrono>
#include <functional>

#include "serve/api_error.hpp"
#include "serve/binding_cache.hpp"
#include "serve/chat_request.hpp"
#include "serve/request_json.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

void send_json(http::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

// Runs `handle` on the parsed body; any RequestError becomes OpenAI's error body.
void json_route(const http::Request& req, http::Response& res, const std::function<Json(const Json&)>& handle) {
  try {
    send_json(res, 200, handle(parse_body(req.body)).dump());
  } catch (const RequestError& e) {
    send_json(res, e.error.status, error_body(e.error));
  }
}

std::shared_ptr<const binding::ChatBinding> binding_for(BindingCache& bindings, const Json& body) {
  const std::string model = required_string(body, "model");
  std::string error;
  auto b = bindings.get(model, error);
  if (!b) throw RequestError{{404, error, "invalid_request_error", "model", "model_not_found"}};
  return b;
}

// Checks `messages` enough that the template sees what OpenAI's API promises: a non-empty list of
// objects, each with a string role.
const Json& checked_messages(const Json& body, const RouteLimits& limits) {
  const auto it = body.find("messages");
  if (it == body.end())
    throw RequestError{{400, "Missing required parameter: 'messages'", "invalid_request_error", "messages", "missing_required_parameter"}};
  if (!it->is_array() || it->empty())
    throw RequestError{{400, "'messages' must be a non-empty array", "invalid_request_error", "messages", "invalid_type"}};
  if (it->size() > limits.max_messages)
    throw RequestError{{400, "'messages' holds " + std::to_string(it->size()) + " messages; the limit is " + std::to_string(limits.max_messages), "invalid_request_error", "messages", "too_many_messages"}};
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    const std::string param = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw RequestError{{400, "'" + param + "' must be an object", "invalid_request_error", param, "invalid_type"}};
    const auto role = m.find("role");
    if (role == m.end() || !role->is_string())
      throw RequestError{{400, "'" + param + ".role' must be a string", "invalid_request_error", param + ".role", "invalid_type"}};
  }
  return *it;
}

// The template's further variables of a body: its `tools`, rendered as /v1/chat/completions does.
Json template_extra(const Json& body) {
  Json extra = Json::object();
  if (Json tools = checked_tools(body); !tools.is_null()) extra["tools"] = std::move(tools);
  return extra;
}

std::string render(const binding::ChatBinding& b, const Json& messages, bool add_generation_prompt, const Json& extra) {
  chat::RenderOptions options;
  options.add_generation_prompt = add_generation_prompt;
  try {
    return b.chat_template().render(messages, options, extra);
  } catch (const chat::TemplateError& e) {
    const std::string why = e.message().empty() ? std::string(e.what()) : e.message();
    throw RequestError{{400, "The chat template rejected the messages: " + why, "invalid_request_error", "messages", "template_error"}};
  }
}

Json ids_json(const tok::Ids& ids) {
  Json a = Json::array();
  for (const auto id : ids) a.push_back(id);
  return a;
}

}  // namespace

// vLLM's shape: {model, prompt} or {model, messages[, add_generation_prompt]}, and
// add_special_tokens (default true, as `overhead tokenize` has it) -> {count, tokens}.
Json tokenize_response(BindingCache& bindings, const RouteLimits& limits, const Json& body) {
  const auto b = binding_for(bindings, body);
  const bool add_special = optional_bool(body, "add_special_tokens", true);
  std::string text;
  if (body.contains("messages")) {
    text = render(*b, checked_messages(body, limits), optional_bool(body, "add_generation_prompt", false), template_extra(body));
  } else {
    text = required_string(body, "prompt");
  }
  const tok::Ids ids = b->tokenizer().encode(text, add_special);
  return Json{{"count", ids.size()}, {"tokens", ids_json(ids)}, {"model", b->name()}};
}

Json detokenize_response(BindingCache& bindings, const Json& body) {
  const auto b = binding_for(bindings, body);
  const auto it = body.find("tokens");
  if (it == body.end())
    throw RequestError{{400, "Missing required parameter: 'tokens'", "invalid_request_error", "tokens", "missing_required_parameter"}};
  if (!it->is_array()) throw RequestError{{400, "'tokens' must be an array of integers", "invalid_request_error", "tokens", "invalid_type"}};
  tok::Ids ids;
  ids.reserve(it->size());
  const auto vocab = static_cast<std::int64_t>(b->tokenizer().vocab_size());
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& v = (*it)[i];
    const std::string param = "tokens[" + std::to_string(i) + "]";
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      throw RequestError{{400, "'" + param + "' must be a non-negative integer", "invalid_request_error", param, "invalid_type"}};
    // An id past the vocabulary names no token: refused, not decoded to nothing.
    if (v.get<std::int64_t>() >= vocab)
      throw RequestError{{400, "'" + param + "' is " + std::to_string(v.get<std::int64_t>()) + ", outside the vocabulary of " + b->name() +
                                   " (ids 0.." + std::to_string(vocab - 1) + ")",
                          "invalid_request_error", param, "invalid_value"}};
    ids.push_back(static_cast<tok::TokenId>(v.get<std::int64_t>()));
  }
  return Json{{"prompt", b->tokenizer().decode(ids)}};
}

// The chat template alone: {model, messages[, add_generation_prompt]} -> {prompt}.
Json render_response(BindingCache& bindings, const RouteLimits& limits, const Json& body) {
  const auto b = binding_for(bindings, body);
  return Json{{"prompt", render(*b, checked_messages(body, limits), optional_bool(body, "add_generation_prompt", false),
                                      template_extra(body))},
              {"model", b->name()}};
}

void add_token_routes(http::Routes& routes, BindingCache& bindings, const RouteLimits& limits) {
  routes.post("/v1/tokenize", [&bindings, limits](const http::Request& req, http::Response& res) {
    json_route(req, res, [&](const Json& body) { return tokenize_response(bindings, limits, body); });
  });
  routes.post("/v1/detokenize", [&bindings](const http::Request& req, http::Response& res) {
    json_route(req, res, [&](const Json& body) { return detokenize_response(bindings, body); });
  });
  routes.post("/v1/render", [&bindings, limits](const http::Request& req, http::Response& res) {
    json_route(req, res, [&](const Json& body) { return render_response(bindings, limits, body); });
  });
  routes.get("/v1/models", [&bindings](const http::Request&, http::Response& res) {
    Json data = Json::array();
    for (const auto& m : bindings.models())
      data.push_back(Json{{"id", m}, {"object", "model"}, {"created", 0}, {"owned_by", "overhead"}});
    send_json(res, 200, Json{{"object", "list"}, {"data", data}}.dump());
  });
}

}  // namespace overhead::serve
