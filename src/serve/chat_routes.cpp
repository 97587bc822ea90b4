#include "serve/chat_routes.hpp"

#include "serve/http/exchange.hpp"
#include "serve/http/routes.hpp"

#include <ctime>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ports/clock.hpp"
#include "pipe/dead_letter.hpp"
#include "serve/api_error.hpp"
#include "serve/binding_cache.hpp"
#include "serve/chat_pipeline.hpp"
#include "serve/chat_request.hpp"
#include "serve/completion_json.hpp"
#include "serve/completion_stream.hpp"
#include "serve/deadline_timers.hpp"
#include "serve/key_admission.hpp"
#include "serve/metrics.hpp"
#include "serve/prompt_tokens.hpp"
#include "serve/reply_box.hpp"
#include "serve/request_json.hpp"
#include "serve/special_tokens_guard.hpp"
#include "serve/stream_pump.hpp"
#include "serve/sync_answer.hpp"
#include "util/random_id.hpp"

namespace overhead::serve {
namespace {

using Json = nlohmann::ordered_json;

void send_error(http::Response& res, const ApiError& e) {
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
}

// 128 bits from the kernel's CSPRNG in hex: unguessable, so one client cannot read another's
// asynchronous result (util/random_id.hpp says why not a seeded engine).
std::string new_id(const char* prefix) { return util::random_hex_id(prefix); }


// The HTTP answer to a worker's refusal, by dead-letter kind.
ApiError refusal_error(const Reply& r) {
  using pipe::DeadLetterKind;
  const auto is = [&](DeadLetterKind k) { return r.error_kind == pipe::kind_name(k); };
  if (is(DeadLetterKind::template_error))
    return {400, "The chat template rejected the messages: " + r.error_reason, "invalid_request_error", "messages", "template_error"};
  if (is(DeadLetterKind::unknown_tokenizer)) return {404, r.error_reason, "invalid_request_error", "model", "model_not_found"};
  if (is(DeadLetterKind::prompt_too_large)) return {400, r.error_reason, "invalid_request_error", "messages", "prompt_too_large"};
  if (r.error_kind == kTimeoutKind) return {504, "No answer from the worker: " + r.error_reason, "server_error", "", "timeout"};
  if (is(DeadLetterKind::publish_failed))
    return {503, "The record of this request could not be published: " + r.error_reason, "server_error", "", "publish_failed"};
  // The engine blamed the request (e.g. a prompt over its context length): the client's error, which
  // an SDK must not retry as it retries a 502.
  if (is(DeadLetterKind::engine_refused))
    return {400, "The engine refused this request: " + r.error_reason, "invalid_request_error", "", "engine_refused"};
  if (is(DeadLetterKind::decode_failed))
    return {502, "The decoder failed on this request: " + r.error_reason, "server_error", "", "decode_failed"};
  if (is(DeadLetterKind::bad_prompt) || is(DeadLetterKind::missing_field) || is(DeadLetterKind::malformed_json))
    return {400, r.error_reason, "invalid_request_error", "messages", r.error_kind};
  return {500, "The worker failed on this request: " + r.error_reason, "server_error", "", r.error_kind};
}

}  // namespace

// The item's prompt as the pipeline's work-item format wants it: every message carries a
// `content` (null where an assistant turn with tool_calls left it out), so the worker's decode
// accepts every request chat_request.hpp accepted.
std::string item_prompt_json(const nlohmann::ordered_json& messages) {
  Json out = messages;
  for (auto& m : out)
    if (!m.contains("content")) m["content"] = nullptr;
  return out.dump();
}

pipe::SourceRecord work_item_source(const ChatRequest& request, const std::string& id) {
  pipe::SourceRecord source;
  source.id = id;
  source.model = request.model;
  if (request.prompt_text) {
    source.prompt_text = request.prompt_text;  // a completion: the text, through no template
    source.prompt_json = Json(*request.prompt_text).dump();
  } else {
    source.prompt_json = item_prompt_json(request.messages);
  }
  if (!request.tools.is_null()) source.tools_json = request.tools.dump();  // the worker renders them
  source.max_tokens = request.max_tokens;  // the decoder stage's wanted length (no answer here)
  source.sampling = request.sampling;      // passed through to the engine
  if (!request.template_kwargs.empty()) source.template_kwargs_json = request.template_kwargs.dump();  // rendered by the worker
  if (request.constraint) {
    source.constraint = request.constraint->name();  // the record's `constraint`
    source.json_schema = request.constraint->schema_text;  // the engine is constrained to it
  }
  return source;
}

namespace {

class ChatRoutes : public std::enable_shared_from_this<ChatRoutes> {
 public:
  explicit ChatRoutes(const ChatRouteContext& c) : c_(c), shapes_(c.limits.parsers) {
    c_.replies.set_answer_observer([&admission = c_.admission](const AnsweredNote& a) {
      admission.answered(a.key_name, a.key_tpm, a.prompt_tokens, a.completion_tokens, a.cost_usd);
    });
  }

  // Checks the body, admits it under the caller's key and queues it; returns the id, or throws
  // RequestError. The key's rate headers go on `res` either way.
  // `text`: a /v1/completions body (a prompt text) rather than a chat one.
  std::string enqueue(const http::Request& req, http::Response& res, const Json& body, bool kept, ChatRequest& request,
                      RequestInfo& info, bool text = false) {
    request = text ? parse_completion_request(body) : parse_chat_request(body, c_.limits.max_messages);
    const auto tokenizer = c_.bindings.listed_name(request.model);
    if (!tokenizer)
      throw RequestError{{404, "The model '" + request.model + "' does not exist", "invalid_request_error", "model", "model_not_found"}};
    std::string load_error;
    const auto binding = c_.bindings.get(*tokenizer, load_error);  // null: the worker's refusal answers
    // A completion's prompt is the caller's whole text, special tokens and all (as the engines take it).
    if (binding && !text && c_.limits.special_tokens == SpecialTokensInContent::kRefuse) refuse_special_tokens_of(*binding, request);
    if (c_.replies.queued() >= c_.limits.max_queued)
      throw RequestError{{429, "The queue holds " + std::to_string(c_.limits.max_queued) + " requests awaiting an answer; retry after " +
                                   std::to_string(c_.limits.retry_after_s) + " s",
                          "requests", "", "rate_limit_exceeded"}};
    if (c_.limits.max_log_backlog > 0) {
      if (const std::size_t backlog = c_.pipeline.log_backlog(); backlog >= c_.limits.max_log_backlog)
        throw RequestError{{429, "The store is behind: " + std::to_string(backlog) + " records await the consumer (limit " +
                                     std::to_string(c_.limits.max_log_backlog) + "); retry after " + std::to_string(c_.limits.retry_after_s) + " s",
                            "requests", "", "rate_limit_exceeded"}};
    }
    // Last, so that a request the gateway itself cannot take does not use up the key's allowance.
    const Caller caller = c_.admission.caller(req.get_header_value("Authorization"));
    const std::int64_t prompt_tokens = binding && KeyAdmission::needs_prompt_tokens(caller) ? count_prompt_tokens(*binding, request) : 0;
    KeyGrant grant;
    if (auto refusal = c_.admission.admit(caller, request.model, prompt_tokens, res, grant)) throw RequestError{std::move(*refusal)};
    const std::string id = new_id(kept ? "req_" : text ? "cmpl-" : "chatcmpl-");
    pipe::SourceRecord source = work_item_source(request, id);
    source.stream = request.stream;  // the worker passes the text on as it is generated
    source.key_name = grant.key_name;  // the record is charged to it
    info = RequestInfo{request.model, *tokenizer, static_cast<std::int64_t>(std::time(nullptr)), ports::monotonic_ns(), kept,
                       text ? nullptr : shapes_.shape(binding.get(), request, id), grant.key_name, grant.tpm};
    // A stream is bounded by its first token and the gaps between its pieces (the pump keeps
    // them); the box's own bound for it is the whole stream's, not a synchronous answer's.
    c_.replies.open(id, info, request.stream ? std::optional(c_.limits.stream_timeout) : std::nullopt);
    if (auto failure = c_.pipeline.submit(source, *tokenizer)) {
      c_.replies.forget(id);
      if (failure->permanent)
        throw RequestError{{400, "The request cannot be queued: " + failure->reason, "invalid_request_error", "messages", "prompt_too_large"}};
      throw RequestError{{503, "The input queue is unavailable: " + failure->reason, "server_error", "", "queue_unavailable"}};
    }
    return id;
  }

  // The binding's tokenizer is the one the worker will encode with (loaded once, shared with the
  // token routes). One that cannot be loaded here cannot be encoded there either: the worker's
  // refusal answers that request, with nothing encoded.
  void refuse_special_tokens_of(const binding::ChatBinding& b, const ChatRequest& request) {
    try {
      refuse_special_tokens(b.tokenizer(), request.messages, request.tools);
    } catch (const RequestError&) {
      c_.metrics.count_special_token_refusal();
      throw;
    }
  }

  void record_stages(const RequestSnapshot& s) {
    const ports::Record& r = s.reply->record;
    const auto sec = [](std::int64_t from, std::int64_t to) { return from > 0 && to >= from ? double(to - from) / 1e9 : -1.0; };
    // The worker's stamps are on its host's monotonic clock: the stages that span the gateway and
    // the worker (queue, publish) are measured only when the stamps fall inside the gateway's own
    // sent -> reply span, i.e. the worker ran on this host.
    const std::int64_t last = r.decode_end > 0 ? r.decode_end : r.encode_end;
    const bool same_clock = r.render_start >= s.info.submitted_ns && last <= s.replied_ns;
    if (same_clock) c_.metrics.record_stage("queue", sec(s.info.submitted_ns, r.render_start));
    c_.metrics.record_stage("render", sec(r.render_start, r.render_end));
    c_.metrics.record_stage("encode", sec(r.render_end, r.encode_end));
    if (r.decode_end > 0) c_.metrics.record_stage("decode", sec(r.decode_start, r.decode_end));  // --decoder sim: or openai:
    if (same_clock) c_.metrics.record_stage("publish", sec(last, s.replied_ns));
    c_.metrics.record_stage("total", sec(s.info.submitted_ns, s.replied_ns));
    if (r.engine_prompt_tokens) c_.metrics.count_engine_prompt(r.tokenizer, r.prompt_tokens_mismatch());
  }

  // POST /v1/chat/completions, and with `text` POST /v1/completions.
  void completions(const http::Request& req, http::Response& res, bool text) {
    ChatRequest request;
    RequestInfo info;
    std::string id;
    try {
      id = enqueue(req, res, parse_body(req.body), false, request, info, text);
    } catch (const RequestError& e) {
      if (e.error.status == 429 && !res.has_header("Retry-After")) res.set_header("Retry-After", std::to_string(c_.limits.retry_after_s));
      send_error(res, e.error);
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (request.stream) {
      stream_completion(id, info, request.include_usage,
                        StreamDeadlines{now + c_.limits.first_token_timeout, c_.limits.stream_idle_timeout, now + c_.limits.stream_timeout},
                        res, text);
      return;
    }
    // The key's rate headers, set at admission, go on the deferred answer too (it is a new response).
    sync_completion(id, info, now + c_.limits.request_timeout, res, res.headers.fields(), text);
  }

  static ApiError shutting_down_error() { return {503, "The server is shutting down", "server_error", "", "shutting_down"}; }
  // What an answer or a stream pump says when no answer came in time (or at a shutdown); they may
  // outlive these routes, so they hold them weakly.
  std::function<ApiError()> no_answer_hook(const std::string& id) {
    return [weak = weak_from_this(), id] {
      const auto self = weak.lock();
      return self ? self->no_answer_error(id) : shutting_down_error();
    };
  }
  // The client went away or --request-timeout passed: the engine stops too (not at a shutdown,
  // which lets requests finish).
  std::function<void()> abandon_hook(const std::string& id) {
    return [weak = weak_from_this(), id] {
      if (const auto self = weak.lock(); self && !self->c_.replies.cancelled()) self->c_.pipeline.cancel(id);
    };
  }

  // A synchronous answer holds no thread either (sync_answer.hpp): the handler returns at once and
  // the answer is written from the thread that delivered the reply. A client that disconnects
  // while its answer is being generated cancels the generation, and so does --request-timeout.
  void sync_completion(const std::string& id, const RequestInfo& info, std::chrono::steady_clock::time_point deadline,
                       http::Response& res, std::vector<std::pair<std::string, std::string>> admission_headers = {}, bool text = false) {
    SyncAnswerHooks hooks;
    hooks.refusal = refusal_error;
    hooks.no_answer = no_answer_hook(id);
    hooks.abandoned = abandon_hook(id);
    const std::weak_ptr<ChatRoutes> weak = weak_from_this();
    hooks.answer = [weak, id, info, text, admission_headers = std::move(admission_headers)](const RequestSnapshot& s) {
      http::Response out;
      for (const auto& [name, value] : admission_headers) out.set_header(name, value);
      const auto self = weak.lock();
      if (!self) {
        out.status = 503;
        out.set_content(error_body(shutting_down_error()), "application/json");
        return out;
      }
      self->record_stages(s);
      Completion completion = reply_completion(id, info.created, info.model, *s.reply, self->c_.pipeline.fingerprint(), info.shape.get());
      completion.text_completion = text;
      if (completion.invalid_output) {
        out.status = completion.invalid_output->status;
        out.set_content(error_body(*completion.invalid_output), "application/json");
        return out;
      }
      out.set_content(completion_body(completion).dump(), "application/json");
      return out;
    };
    SyncAnswer::start(c_.replies, *timers_, id, res.defer(), deadline, std::move(hooks));
  }

  // A stream starts once the worker took the request up: the prompt is rendered and encoded
  // before the first byte goes out, so a template error is still a plain 400. What streams is the
  // decode, piece by piece as the box receives it, pushed by a StreamPump (stream_pump.hpp): the
  // handler returns at once and no thread is held while the stream lasts.
  void stream_completion(const std::string& id, const RequestInfo& info, bool include_usage, StreamDeadlines deadlines,
                         http::Response& res, bool text) {
    Completion head;
    head.text_completion = text;
    head.id = id;
    head.created = info.created;
    head.model = info.model;
    head.fingerprint = c_.pipeline.fingerprint();
    StreamPumpHooks hooks;
    hooks.refusal = refusal_error;
    hooks.no_answer = no_answer_hook(id);
    hooks.abandoned = abandon_hook(id);
    const std::weak_ptr<ChatRoutes> weak = weak_from_this();
    hooks.done = [weak](const RequestSnapshot& s) {
      if (const auto self = weak.lock()) self->record_stages(s);
    };
    StreamPump::start(c_.replies, timers_, id, CompletionStream(head, include_usage, info.shape), res.defer(), deadlines,
                      std::move(hooks));
  }

  // A request without an answer: timed out, or cut short by a shutdown. At a shutdown the answer
  // says what becomes of the request, so that a client does not retry one that will be stored
  // (issue 21, defect 11): over a shared queue, or once a worker here took it up, it may still be
  // processed and its record stored under its id; else it was not processed and never will be
  // (the in-process queue ends with the process).
  ApiError no_answer_error(const std::string& id) {
    if (c_.replies.cancelled()) {
      const auto s = c_.replies.find(id);
      std::string what = "The server is shutting down and this request was not answered in time; ";
      if (c_.pipeline.shared())
        what += "it stays on the shared input queue and may still be processed by another worker, its record stored under id " + id;
      else if (s && s->taken)
        what += "a worker had taken it up and may still finish it: its record may be stored under id " + id;
      else
        what += "it was not processed and will not be: it is safe to retry";
      return {503, what, "server_error", "", "shutting_down"};
    }
    return {504, "No answer from the worker within " + std::to_string(c_.limits.request_timeout.count()) + " ms",
            "server_error", "", "timeout"};
  }

  void submit_async(const http::Request& req, http::Response& res) {
    ChatRequest request;
    RequestInfo info;
    try {
      const Json body = parse_body(req.body);
      if (optional_bool(body, "stream", false))
        throw RequestError{{400, "'stream' is not available on /v1/requests; poll GET /v1/requests/{id}", "invalid_request_error",
                            "stream", "unsupported_value"}};
      const std::string id = enqueue(req, res, body, true, request, info);
      res.status = 202;
      res.set_header("Location", "/v1/requests/" + id);
      res.set_content(Json{{"id", id}, {"object", "request"}, {"status", "queued"}, {"created", info.created}, {"model", info.model}}.dump(),
                      "application/json");
    } catch (const RequestError& e) {
      if (e.error.status == 429 && !res.has_header("Retry-After")) res.set_header("Retry-After", std::to_string(c_.limits.retry_after_s));
      send_error(res, e.error);
    }
  }

  void request_status(const std::string& id, http::Response& res) {
    const auto s = c_.replies.find(id);
    if (!s && c_.replies.evicted(id)) {
      // Dropped to keep the finished answers within their bounds: say so, rather than "unknown".
      send_error(res, {410, "The answer of request '" + id + "' is no longer kept: finished answers are kept up to --max-kept-bytes, " +
                                "the oldest dropped first; its record is in the store",
                       "invalid_request_error", "id", "expired"});
      return;
    }
    if (!s || !s->info.kept) {
      send_error(res, {404, "No request with id '" + id + "' (unknown, or no longer kept)", "invalid_request_error", "id", "not_found"});
      return;
    }
    Json out{{"id", id}, {"object", "request"}, {"status", state_name(s->state)}, {"created", s->info.created}, {"model", s->info.model}};
    if (s->state == RequestState::done) {
      record_stages_once(id, *s);
      const Completion completion =
          reply_completion(id, s->info.created, s->info.model, *s->reply, c_.pipeline.fingerprint(), s->info.shape.get());
      if (completion.invalid_output) {
        // Done, but with an answer that does not follow its constraint: the error, never the answer.
        out["status"] = "failed";
        out["error"] = Json::parse(error_body(*completion.invalid_output))["error"];
      } else {
        out["response"] = completion_body(completion);
      }
      out["record"] = record_json(s->reply->record);
    } else if (s->state == RequestState::failed) {
      const ApiError e = refusal_error(*s->reply);
      out["error"] = Json::parse(error_body(e))["error"];
    }
    res.set_content(out.dump(), "application/json");
  }

 private:
  // An asynchronous request's stages are counted when it is first read back, never twice.
  void record_stages_once(const std::string& id, const RequestSnapshot& s) {
    std::lock_guard lock(counted_mutex_);
    if (!counted_.insert(id).second) return;
    if (counted_.size() > 100000) counted_.clear();
    record_stages(s);
  }

  ChatRouteContext c_;
  AnswerShapes shapes_;
  // The answers' deadlines; shared, because a stream's pump re-arms its timer while it lasts and
  // may outlive these routes at a shutdown (it holds them weakly).
  std::shared_ptr<DeadlineTimers> timers_ = std::make_shared<DeadlineTimers>();
  std::mutex counted_mutex_;
  std::unordered_set<std::string> counted_;
};

}  // namespace

void add_chat_routes(http::Routes& routes, const ChatRouteContext& context) {
  auto chat = std::make_shared<ChatRoutes>(context);
  routes.post("/v1/chat/completions", [chat](const http::Request& req, http::Response& res) { chat->completions(req, res, false); });
  routes.post("/v1/completions", [chat](const http::Request& req, http::Response& res) { chat->completions(req, res, true); });
  routes.post("/v1/requests", [chat](const http::Request& req, http::Response& res) { chat->submit_async(req, res); });
  routes.get("/v1/requests/{id}",
             [chat](const http::Request& req, http::Response& res) { chat->request_status(req.path_params.at("id"), res); });
}

std::string pipeline_exposition(ChatPipeline& pipeline, ReplyBox& replies) {
  std::string out;
  out += "# HELP overhead_requests_awaiting_reply Requests queued by the gateway and not yet answered by a worker.\n";
  out += "# TYPE overhead_requests_awaiting_reply gauge\n";
  out += "overhead_requests_awaiting_reply " + std::to_string(replies.queued()) + "\n";
  try {
    const ports::QueueCounts c = pipeline.input_counts();
    out += "# HELP overhead_input_queue_messages Messages on the input queue, visible or received and not yet deleted.\n";
    out += "# TYPE overhead_input_queue_messages gauge\n";
    out += "overhead_input_queue_messages{state=\"visible\"} " + std::to_string(c.visible) + "\n";
    out += "overhead_input_queue_messages{state=\"in_flight\"} " + std::to_string(c.in_flight) + "\n";
    const ports::QueueCounts l = pipeline.log_counts();
    out += "# HELP overhead_log_queue_messages Records on the log queue, visible or received and not yet stored.\n";
    out += "# TYPE overhead_log_queue_messages gauge\n";
    out += "overhead_log_queue_messages{state=\"visible\"} " + std::to_string(l.visible) + "\n";
    out += "overhead_log_queue_messages{state=\"in_flight\"} " + std::to_string(l.in_flight) + "\n";
  } catch (const std::exception&) {
    // A queue that cannot tell its depth leaves the gauge out rather than reporting a guess.
  }
  out += "# HELP overhead_dead_letters_total Items the pipeline dead-lettered, by kind.\n";
  out += "# TYPE overhead_dead_letters_total counter\n";
  const auto counts = pipeline.dead_letters().counts();
  for (const auto kind : pipe::kDeadLetterKinds) {
    const auto it = counts.find(pipe::kind_name(kind));
    out += std::string("overhead_dead_letters_total{kind=\"") + pipe::kind_name(kind) + "\"} " +
           std::to_string(it == counts.end() ? 0 : it->second) + "\n";
  }
  return out;
}

}  // namespace overhead::serve
