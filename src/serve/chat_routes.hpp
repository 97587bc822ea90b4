// The routes that go through the pipeline: POST /v1/chat/completions and POST /v1/completions (a
// prompt text through no template; each synchronous, or a stream of server-sent events), POST
// /v1/requests (asynchronous: 202 and an id) and GET /v1/requests/{id}. Each request is checked
// (chat_request.hpp), sent as a work item onto the input queue and answered from the worker's
// reply (reply_box.hpp); nothing here renders or encodes.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "pipe/work_item.hpp"
#include "serve/answer_shape.hpp"
#include "serve/chat_request.hpp"
#include "serve/special_tokens_guard.hpp"

namespace overhead::serve::http {
class Routes;
}

namespace overhead::serve {

class BindingCache;
class ChatPipeline;
class KeyAdmission;
class Metrics;
class ReplyBox;

struct ChatRouteLimits {
  std::size_t max_messages = 1024;
  std::chrono::milliseconds request_timeout{30000};  // a synchronous (or asynchronous) request's wait for its reply
  // A stream is not bounded by request_timeout, which would cut one that receives text all along:
  // its first text must come within first_token_timeout, then no gap between two pieces may pass
  // stream_idle_timeout, and the whole stream ends within stream_timeout.
  std::chrono::milliseconds first_token_timeout{30000};
  std::chrono::milliseconds stream_idle_timeout{30000};
  std::chrono::milliseconds stream_timeout{600000};
  std::size_t max_queued = 1024;                     // requests awaiting a reply past which 429
  int retry_after_s = 1;
  // Records awaiting the consumer (the log queue's backlog) past which 429: the replies go out
  // when a record is on the log queue, so a store slower than the workers would otherwise let the
  // backlog, and the memory of an in-process queue, grow without bound. 0: no limit.
  std::size_t max_log_backlog = 20000;
  // Special-token text in the messages or tools: refused (400) or passed on as HF parses it
  // (special_tokens_guard.hpp).
  SpecialTokensInContent special_tokens = SpecialTokensInContent::kRefuse;
  // The answers' parsers: the template's, or these (answer_shape.hpp).
  ParserOverrides parsers;
};

struct ChatRouteContext {
  BindingCache& bindings;
  ChatPipeline& pipeline;
  ReplyBox& replies;
  Metrics& metrics;
  ChatRouteLimits limits;
  KeyAdmission& admission;  // the caller's key: model, budget, rate limits (key_admission.hpp)
};

// The work item's source for a checked request (id, model, prompt, tools, max_tokens): what the
// gateway sends and the worker decodes (pipe/work_item.hpp). Also used by the request fuzzer,
// which checks that every request the gateway accepts decodes on the worker's side.
[[nodiscard]] pipe::SourceRecord work_item_source(const ChatRequest& request, const std::string& id);
// The messages as the work-item format wants them: each with a `content` (null when left out).
[[nodiscard]] std::string item_prompt_json(const nlohmann::ordered_json& messages);

// `context` must outlive the server.
void add_chat_routes(http::Routes& routes, const ChatRouteContext& context);

// Prometheus lines for the pipeline: requests awaiting a reply, the input queue's depth and the
// dead letters by kind.
[[nodiscard]] std::string pipeline_exposition(ChatPipeline& pipeline, ReplyBox& replies);

}  // namespace overhead::serve
