// libFuzzer target for the gateway's request handling without HTTP: a raw body goes through
// parse_body (the depth check, then the JSON parse) and the work of one route, picked by the first
// input byte (0: /v1/chat/completions, 1: /v1/tokenize, 2: /v1/render, 3: /v1/detokenize). The
// models are the real phi-4 and Llama-3.3 bindings (Llama's template renders tools). What must hold:
//   - a refused body is a RequestError with a 4xx status and a message, and its error body is JSON;
//     nothing else escapes (an exception would be a 500, a crash the whole gateway);
//   - an answer serialises (dump) as the route sends it;
//   - a chat request the gateway accepts is a work item the worker parses (parse_item_body does
//     not refuse it: the gateway and the worker agree on what they accept), and rendering it with
//     the item's prompt and tools fails, if at all, only with the template's own TemplateError.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"
#include "fuzz_support.hpp"
#include "ports/errors.hpp"
#include "pipe/work_item.hpp"
#include "serve/api_error.hpp"
#include "serve/binding_cache.hpp"
#include "serve/chat_request.hpp"
#include "serve/chat_routes.hpp"
#include "serve/request_json.hpp"
#include "serve/token_routes.hpp"

namespace {

using namespace overhead;
using Json = nlohmann::ordered_json;

serve::BindingCache& bindings() {
  static serve::BindingCache cache({"phi-4", "llama-3.3-70b-instruct"});
  return cache;
}

void check_refusal(const serve::RequestError& e) {
  if (e.error.status < 400 || e.error.status > 499) fuzz::fail("a refusal with status " + std::to_string(e.error.status));
  if (e.error.message.empty()) fuzz::fail("a refusal without a message");
  const std::string body = serve::error_body(e.error);
  if (Json::parse(body, nullptr, false).is_discarded()) fuzz::fail("an error body that is not JSON: " + body);
}

// The worker's side of an accepted chat request: decode the item the gateway would send, render it.
void worker_side(const serve::ChatRequest& request) {
  std::string error;
  const auto binding = bindings().get(request.model, error);
  if (!binding) return;  // the gateway answers 404 before sending
  const pipe::SourceRecord source = serve::work_item_source(request, "chatcmpl-fuzz");
  const std::string body = pipe::encode_item_body(source, request.model);
  pipe::WorkItem item;
  try {
    item = pipe::parse_item_body(body, "message 1");
  } catch (const std::exception& e) {
    fuzz::fail(std::string("the gateway accepted a request the worker refuses: ") + e.what() + "\nbody: " + body);
  }
  std::string text;
  try {
    binding->chat_template().render_into(text, item.source->prompt_value, chat::RenderOptions{},
                                         item.source->template_extra ? &item.source->template_extra->value : nullptr);
  } catch (const chat::TemplateError&) {
    // The worker refuses it as template_error, and the gateway answers 400.
  }
}

void handle(std::uint8_t route, const std::string& raw) {
  try {
    const Json body = serve::parse_body(raw);
    switch (route % 4) {
      case 0: {
        const serve::ChatRequest request = serve::parse_chat_request(body, 64);
        worker_side(request);
        break;
      }
      case 1: (void)serve::tokenize_response(bindings(), serve::RouteLimits{64}, body).dump(); break;
      case 2: (void)serve::render_response(bindings(), serve::RouteLimits{64}, body).dump(); break;
      default: (void)serve::detokenize_response(bindings(), body).dump(); break;
    }
  } catch (const serve::RequestError& e) {
    check_refusal(e);
  } catch (const std::exception& e) {
    fuzz::fail(std::string("route ") + std::to_string(route % 4) + " let an exception escape: " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  handle(data[0], std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
