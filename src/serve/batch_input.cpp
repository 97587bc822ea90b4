#include "serve/batch_input.hpp"

#include <algorithm>

#include "serve/binding_cache.hpp"
#include "serve/chat_request.hpp"
#include "serve/chat_routes.hpp"
#include "serve/request_json.hpp"
#include "util/json_depth.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

LineError error(std::size_t line, std::string code, std::string message, std::string param = {}) {
  return LineError{std::move(code), "Line " + std::to_string(line) + ": " + std::move(message), std::move(param), line};
}

}  // namespace

ObjectLines::ObjectLines(ports::ObjectStore& store, std::string key, std::size_t max_line_bytes, std::size_t piece_bytes)
    : store_(store), key_(std::move(key)), max_line_bytes_(max_line_bytes), piece_bytes_(piece_bytes) {}

bool ObjectLines::fill() {
  if (end_) return false;
  std::string piece = store_.get_range(key_, offset_, piece_bytes_);
  if (piece.empty()) {
    end_ = true;
    return false;
  }
  offset_ += piece.size();
  buffer_.erase(0, at_);
  at_ = 0;
  buffer_ += piece;
  return true;
}

bool ObjectLines::next(std::string& line, bool& too_long) {
  too_long = false;
  line.clear();
  for (;;) {
    const std::size_t eol = buffer_.find('\n', at_);
    if (eol != std::string::npos) {
      if (!too_long) line.assign(buffer_, at_, std::min(eol - at_, max_line_bytes_ + 1));
      at_ = eol + 1;
      break;
    }
    if (buffer_.size() - at_ > max_line_bytes_) {
      // Keep the line's head (for its error), drop the rest as it arrives.
      if (!too_long) line.assign(buffer_, at_, max_line_bytes_);
      too_long = true;
      at_ = buffer_.size();
    }
    if (!fill()) {
      if (at_ >= buffer_.size() && line.empty() && !too_long) return false;
      if (!too_long) line.assign(buffer_, at_, std::string::npos);
      at_ = buffer_.size();
      break;
    }
  }
  if (line.size() > max_line_bytes_) {
    line.resize(max_line_bytes_);
    too_long = true;
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  ++line_number_;
  return true;
}

Json LineError::json() const { return Json{{"code", code}, {"message", message}, {"param", param.empty() ? Json() : Json(param)}, {"line", line}}; }

std::variant<CheckedLine, LineError> check_batch_line(const std::string& line, std::size_t number, const Batch& batch,
                                                      BindingCache& bindings, const BatchLineLimits& limits) {
  const std::string& endpoint = batch.endpoint;
  Json j;
  try {
    j = parse_body(line);
  } catch (const RequestError& e) {
    return error(number, "invalid_json_line", "not a JSON object: " + e.error.message);
  }
  const auto text = [&](const char* name) -> const std::string* {
    const auto it = j.find(name);
    return it != j.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
  };
  const std::string* custom_id = text("custom_id");
  if (!custom_id || custom_id->empty())
    return error(number, "missing_required_parameter", "no string custom_id", "custom_id");
  if (custom_id->size() > 512) return error(number, "invalid_custom_id", "custom_id is over 512 bytes", "custom_id");
  const std::string* method = text("method");
  if (!method || *method != "POST") return error(number, "invalid_method", "method must be \"POST\"", "method");
  const std::string* url = text("url");
  if (!url || *url != endpoint)
    return error(number, "mismatched_endpoint", "url " + (url ? "\"" + *url + "\"" : std::string("(none)")) + " is not the batch's endpoint \"" +
                                                    endpoint + "\"", "url");
  const auto body = j.find("body");
  if (body == j.end() || !body->is_object()) return error(number, "missing_required_parameter", "no object body", "body");
  CheckedLine out;
  try {
    const bool completion = endpoint == "/v1/completions";
    out.request = completion ? parse_completion_request(*body) : parse_chat_request(*body, limits.max_messages);
    const ChatRequest& request = out.request;
    if (request.stream) return error(number, "invalid_request", "stream is not served in a batch", "body.stream");
    const auto tokenizer = bindings.listed_name(request.model);
    if (!tokenizer) return error(number, "model_not_found", "the model '" + request.model + "' does not exist", "body.model");
    const auto& allowed = batch.owner_models;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), request.model) == allowed.end())
      return error(number, "model_not_allowed", "the API key '" + batch.owner + "' may not use the model '" + request.model + "'", "body.model");
    if (!completion && limits.special_tokens == SpecialTokensInContent::kRefuse) {
      std::string load_error;
      if (const auto binding = bindings.get(*tokenizer, load_error)) refuse_special_tokens(binding->tokenizer(), request.messages, request.tools);
    }
    out.source = work_item_source(request, *custom_id);
    out.tokenizer = *tokenizer;
  } catch (const RequestError& e) {
    return error(number, e.error.code.empty() ? "invalid_request" : e.error.code, e.error.message,
                 e.error.param.empty() ? "body" : "body." + e.error.param);
  }
  out.source.batch = batch.id;
  out.source.key_name = batch.owner;  // its record, and so its price, is charged to the key
  out.source.line = number;
  out.body = pipe::encode_item_body(out.source, out.tokenizer);
  if (out.body.size() > limits.max_item_bytes)
    return error(number, "request_too_large", "the request is " + std::to_string(out.body.size()) + " bytes as a work item, over the batch lane's " +
                                                  std::to_string(limits.max_item_bytes), "body");
  return out;
}

}  // namespace overhead::serve
