// The shared per-request work of the HTTP-library benchmark servers (see tokenize_handler.hpp).
// It reuses the gateway's request readers, error body and binding cache rather than its route
// file, which is tied to httplib's types.
#include "tokenize_handler.hpp"

#include <nlohmann/json.hpp>

#include "serve/api_error.hpp"
#include "serve/request_json.hpp"

namespace overhead::bench {

using Json = nlohmann::ordered_json;
using serve::RequestError;

TokenizeHandler::TokenizeHandler(std::vector<std::string> models) : bindings_(std::move(models)) {}

Reply TokenizeHandler::tokenize(const std::string& body) {
  try {
    const Json j = serve::parse_body(body);
    const std::string model = serve::required_string(j, "model");
    std::string error;
    const auto b = bindings_.get(model, error);
    if (!b) throw RequestError{{404, error, "invalid_request_error", "model", "model_not_found"}};
    const auto messages = j.find("messages");
    if (messages == j.end() || !messages->is_array() || messages->empty())
      throw RequestError{{400, "'messages' must be a non-empty array", "invalid_request_error", "messages", "invalid_type"}};
    std::string text;
    try {
      text = b->chat_template().render(*messages, chat::RenderOptions{});
    } catch (const chat::TemplateError& e) {
      throw RequestError{{400, std::string("The chat template rejected the messages: ") + e.what(), "invalid_request_error", "messages", "template_error"}};
    }
    const tok::Ids ids = b->tokenizer().encode(text, /*add_special=*/true);
    Json tokens = Json::array();
    for (const auto id : ids) tokens.push_back(id);
    return {200, Json{{"count", ids.size()}, {"tokens", std::move(tokens)}}.dump()};
  } catch (const RequestError& e) {
    return {e.error.status, serve::error_body(e.error)};
  }
}

}  // namespace overhead::bench
