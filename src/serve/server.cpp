#include "serve/server.hpp"

#include <chrono>
#include <stdexcept>

#include "serve/api_error.hpp"
#include "serve/api_keys.hpp"
#include "serve/batch_routes.hpp"
#include "serve/upload_routes.hpp"
#include "serve/binding_cache.hpp"
#include "serve/chat_routes.hpp"
#include "serve/dashboard_routes.hpp"
#include "serve/heap_policy.hpp"
#include "serve/http/http_server.hpp"
#include "serve/key_admission.hpp"
#include "serve/key_metrics.hpp"
#include "serve/key_spend.hpp"
#include "serve/metrics.hpp"
#include "serve/reply_box.hpp"
#include "serve/token_routes.hpp"
#include "serve/usage_routes.hpp"
#include "serve/window_rate_limiter.hpp"

namespace overhead::serve {
namespace {

http::Response json_error(const ApiError& e) {
  http::Response res;
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
  return res;
}

// At a shutdown past its deadline, how long the workers may take to finish the items they hold.
constexpr std::chrono::seconds kFinishGrace{1};

// What the gateway decides around every request: auth before routing (routes registered as open
// need no key; the others a key of api_keys.hpp, when the gateway has any), the in-flight limit
// before the body is read, OpenAI's error shape, the metrics. A route's own admission (the chat
// routes: model, budget, rate limits) comes after the body, in key_admission.hpp.
class GatewayGate final : public http::Gatekeeper {
 public:
  GatewayGate(const ServerOptions& options, Metrics& metrics, const KeyAdmission& admission)
      : options_(options), metrics_(metrics), admission_(admission) {}

  std::optional<http::Response> authorize(const http::Request& req, const http::Route* route) override {
    if (route && route->options.open) return std::nullopt;
    const Caller caller = admission_.caller(req.get_header_value("Authorization"));
    if (caller.verdict == KeyVerdict::ok) return std::nullopt;
    http::Response res = json_error(caller_error(caller));
    res.set_header("WWW-Authenticate", "Bearer");
    return res;
  }

  std::optional<http::Response> admit(const http::Request&, const http::Route& route, bool& counted) override {
    // Scrapes, health checks and the dashboard's documents neither count in flight nor wait behind the limit.
    if (route.options.operational) return std::nullopt;
    const std::int64_t in_flight = metrics_.enter();
    counted = true;  // finished() releases it, refused or not
    if (options_.max_inflight <= 0 || in_flight <= options_.max_inflight) return std::nullopt;
    // Refused before the body is read, so overload costs a header parse, not a buffered body.
    http::Response res = json_error({429, "The server is at its limit of " + std::to_string(options_.max_inflight) + " requests in flight; retry after " +
                                              std::to_string(options_.retry_after_s) + " s",
                                     "requests", "", "rate_limit_exceeded"});
    res.set_header("Retry-After", std::to_string(options_.retry_after_s));
    return res;
  }

  http::Response error(int status, const std::string& message, const std::string& code) override {
    return json_error({status, message, status >= 500 ? "server_error" : "invalid_request_error", "", code});
  }

  void finished(std::string_view label, int status, double seconds, bool counted) override {
    if (counted) metrics_.leave();
    metrics_.record(label, status, seconds);
  }

 private:
  const ServerOptions& options_;
  Metrics& metrics_;
  const KeyAdmission& admission_;
};

http::HttpServerOptions http_options(const ServerOptions& o) {
  http::HttpServerOptions h;
  h.host = o.host;
  h.port = o.port;
  h.event_loop_threads = o.io_threads > 0 ? static_cast<unsigned>(o.io_threads) : 0;
  h.handler_threads = o.threads > 0 ? static_cast<unsigned>(o.threads) : 0;
  h.max_waiting_requests = o.max_waiting_requests;
  h.retry_after_s = o.retry_after_s;
  h.limits.max_body_bytes = o.max_body_bytes;
  h.limits.read_timeout = std::chrono::seconds(o.read_timeout_s);
  h.limits.write_timeout = std::chrono::seconds(o.write_timeout_s);
  h.limits.idle_timeout = std::chrono::seconds(o.idle_timeout_s);
  return h;
}

http::RouteOptions health_check() {
  http::RouteOptions o;
  o.open = true;
  o.operational = true;
  o.on_event_loop = true;  // answerable when every handler thread is busy
  return o;
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      bindings_(std::make_unique<BindingCache>(options_.models)),
      metrics_(std::make_unique<Metrics>()),
      api_keys_(std::make_unique<ApiKeys>(options_.keys, options_.auth_token, options_.key_refresh)),
      key_spend_(std::make_unique<KeySpend>(options_.keys, options_.spend_refresh, [keys = api_keys_.get()] { return keys->any_budget(); })),
      key_metrics_(std::make_unique<KeyMetrics>(options_.max_key_metrics)),
      admission_(std::make_unique<KeyAdmission>(
          *api_keys_, *key_spend_,
          options_.limiter ? options_.limiter : std::make_shared<WindowRateLimiter>(options_.limit_window), *key_metrics_,
          options_.limits_fail_closed ? LimitsOnError::closed : LimitsOnError::open)),
      routes_(std::make_unique<http::Routes>()),
      gate_(std::make_unique<GatewayGate>(options_, *metrics_, *admission_)),
      memory_trim_(std::make_unique<PeriodicMemoryTrim>(options_.memory_trim_interval)) {
  http::Routes& routes = *routes_;
  http::RouteOptions scrape;
  scrape.operational = true;
  routes.get("/metrics", [this](const http::Request&, http::Response& res) {
    std::string text = metrics_->exposition();
    text += "# HELP overhead_http_connections_open Client connections open (idle kept-alive ones included).\n";
    text += "# TYPE overhead_http_connections_open gauge\n";
    text += "overhead_http_connections_open " + std::to_string(http_->open_connections()) + "\n";
    text += "# HELP overhead_http_requests_waiting Requests read and waiting for a free handler thread.\n";
    text += "# TYPE overhead_http_requests_waiting gauge\n";
    text += "overhead_http_requests_waiting " + std::to_string(http_->waiting_requests()) + "\n";
    if (pipeline_) text += pipeline_exposition(*pipeline_, *replies_);
    if (batches_) {
      text += "# HELP overhead_batch_lines_sent_total Batch lines this gateway sent to the batch lane.\n";
      text += "# TYPE overhead_batch_lines_sent_total counter\n";
      text += "overhead_batch_lines_sent_total " + std::to_string(batches_->lines_sent()) + "\n";
    }
    text += key_metrics_->exposition();
    if (api_keys_->store() || options_.limiter) {
      text += "# HELP overhead_key_store_refresh_failures_total Reads of the keys or their spend from the store that failed (the last ones read stay in force).\n";
      text += "# TYPE overhead_key_store_refresh_failures_total counter\n";
      text += "overhead_key_store_refresh_failures_total " + std::to_string(api_keys_->refresh_failures() + key_spend_->refresh_failures()) + "\n";
      text += "# HELP overhead_rate_limiter_failures_total Admissions or charges the rate limiter could not answer (--limits-on-error decided).\n";
      text += "# TYPE overhead_rate_limiter_failures_total counter\n";
      text += "overhead_rate_limiter_failures_total " + std::to_string(admission_->limiter_failures()) + "\n";
    }
    res.set_content(text, "text/plain; version=0.0.4");
  }, scrape);
  routes.get("/healthz", [](const http::Request&, http::Response& res) { res.set_content("ok\n", "text/plain"); }, health_check());
  routes.get("/readyz", [](const http::Request&, http::Response& res) { res.set_content("ready\n", "text/plain"); }, health_check());
  add_token_routes(routes, *bindings_, RouteLimits{options_.max_messages});
  add_dashboard_routes(routes);
  if (api_keys_->store()) add_usage_routes(routes, *api_keys_->store(), *admission_);
  if (options_.pipeline.input) {
    // A request no worker answers within the request timeout is answered "timeout" by the box, so
    // an asynchronous one cannot hold its --max-queued place forever.
    replies_ = std::make_unique<ReplyBox>(10000, options_.request_timeout, options_.max_kept_bytes);
    pipe::WorkerHostOptions workers = options_.workers;
    workers.tokenizers = bindings_->models();
    // The records count the answers' calls and reasoning as this gateway reads them.
    workers.worker.answer_parsers = {options_.parsers.tool_parser, options_.parsers.reasoning_parser};
    pipeline_ = std::make_unique<ChatPipeline>(options_.pipeline, std::move(workers), options_.dead_letter_path, *replies_);
    ChatRouteLimits limits;
    limits.max_messages = options_.max_messages;
    limits.request_timeout = options_.request_timeout;
    limits.first_token_timeout = options_.first_token_timeout;
    limits.stream_idle_timeout = options_.stream_idle_timeout;
    limits.stream_timeout = options_.stream_timeout;
    limits.max_queued = options_.max_queued;
    limits.retry_after_s = options_.retry_after_s;
    limits.max_log_backlog = options_.max_log_backlog;
    limits.special_tokens = options_.special_tokens_in_content;
    limits.parsers = options_.parsers;
    add_chat_routes(routes, ChatRouteContext{*bindings_, *pipeline_, *replies_, *metrics_, limits, *admission_});
    if (options_.batches.state && options_.batches.records && pipeline_->batch_lane()) {
      BatchBackends b = options_.batches;
      b.lane = pipeline_->batch_lane();
      BatchLimits bl = options_.batch_limits;
      bl.lines.max_line_bytes = options_.max_body_bytes;  // a line's body is a request
      bl.lines.max_messages = options_.max_messages;
      bl.lines.max_item_bytes = b.lane->max_message_bytes();
      bl.lines.special_tokens = options_.special_tokens_in_content;
      bl.parsers = options_.parsers;
      batches_ = std::make_unique<BatchRunner>(std::move(b), *bindings_, bl);
      add_batch_routes(routes, *batches_, *admission_);
      uploads_ = std::make_unique<BatchUploads>(*batches_, options_.upload_limits);
      add_upload_routes(routes, *uploads_, *admission_);
    }
  }
  http_ = std::make_unique<http::HttpServer>(http_options(options_), routes, *gate_);
}

Server::~Server() = default;

void Server::bind() { port_ = http_->bind(); }

void Server::run() {
  http_->run();
  std::chrono::steady_clock::time_point deadline;
  {
    std::lock_guard lock(shutdown_mutex_);
    http_done_ = true;
    deadline = deadline_.value_or(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  }
  http_done_cv_.notify_all();
  if (pipeline_) pipeline_->stop(deadline);
}

void Server::stop() { http_->stop(); }

void Server::shutdown(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(shutdown_mutex_);
  deadline_ = deadline;
  http_->stop();
  if (http_done_cv_.wait_until(lock, deadline, [&] { return http_done_; })) return;
  // Past the deadline: the workers take nothing more up and get a moment to finish what they hold
  // (those requests are answered as usual); whoever still waits then gets 503, whose body says
  // whether the request may still be stored (chat_routes.cpp). Those answers get a moment to be
  // written, then what is still open is closed so run() can return.
  lock.unlock();
  if (pipeline_) (void)pipeline_->stop_taking(deadline + kFinishGrace);
  if (replies_) replies_->cancel_all();
  lock.lock();
  if (!http_done_cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return http_done_; })) http_->abort();
}

}  // namespace overhead::serve
