


#include "serve/api_error.hpp"
#include "serve/bearer_auth.hpp"
#include "serve/binding_cache.hpp"
#include "serve/bounded_thread_pool.hpp"
#include "serve/chat_routes.hpp"
#include "serve/dashboard_routes.hpp"
#include "serve/heap_policy.hpp"
#include "serve/metrics.hpp"
#include "serve/reply_box.hpp"
#include "serve/server.hpp"
#include "serve/token_routes.hpp"
#include <chrono>
#include <httplib.h>
#include <stdexcept>

namespace overhead::serve {
namespace {

// httplib runs one request from routing to the logger call on one pool thread, so what the
// pre-routing handler notes for a request can wait here for the logger to read it.
struct RequestNote {
  bool started = false;   // the pre-routing handler saw it (so `start` is set)
  bool admitted = false;  // it counts in the in-flight gauge until the logger releases it
  std::chrono::steady_clock::time_point start;
};
thread_local RequestNote tl_request;

// At a shutdown past its deadline, how long the workers may take to finish the items they hold.
constexpr std::chrono::seconds kFinishGrace{1};

// Scrapes, health checks and the dashboard's documents neither count in flight nor wait behind the limit.
bool is_operational(const std::string& path) {
  return path == "/healthz" || path == "/readyz" || path == "/metrics" || is_dashboard_path(path);
}

}  // namespace

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      bindings_(std::make_unique<BindingCache>(options_.models)),
      metrics_(std::make_unique<Metrics>()),
      http_(std::make_unique<httplib::Server>()),
      memory_trim_(std::make_unique<PeriodicMemoryTrim>(options_.memory_trim_interval)) {
  httplib::Server& http = *http_;
  http.set_payload_max_length(options_.max_body_bytes);
  http.set_read_timeout(options_.read_timeout_s, 0);
  http.set_write_timeout(options_.write_timeout_s, 0);
  http.set_keep_alive_timeout(options_.idle_timeout_s);
  // httplib writes the headers and the body of an answer in separate sends; with Nagle on, the
  // body then waits for the client's delayed ACK (about 40 ms on Linux) on a kept-alive connection.
  http.set_tcp_nodelay(true);
  // httplib closes a kept-alive connection after 5 requests by default; a client pool (wrk, the
  // openai client) would then reconnect every few requests.
  http.set_keep_alive_max_count(1000);
  {
    const std::size_t threads = options_.threads > 0 ? static_cast<std::size_t>(options_.threads) : CPPHTTPLIB_THREAD_POOL_COUNT;
    const std::size_t pending = options_.max_pending_connections;
    http.new_task_queue = [threads, pending] { return new BoundedThreadPool(threads, pending); };
  }
  // Auth runs before routing; health checks stay open so a load balancer needs no secret, and the
  // dashboard's documents so a browser can load the page that asks for the token.
  // It also starts the request's clock and admits it to the in-flight count; this runs before
  // httplib reads the body, so a slow body counts as in flight.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    tl_request = RequestNote{true, false, std::chrono::steady_clock::now()};
    const bool open = options_.auth_token.empty() || req.path == "/healthz" || req.path == "/readyz" || is_dashboard_path(req.path);
    if (open || bearer_matches(req.get_header_value("Authorization"), options_.auth_token)) {
      if (is_operational(req.path)) return httplib::Server::HandlerResponse::Unhandled;
      const std::int64_t in_flight = metrics_->enter();
      tl_request.admitted = true;  // the logger releases it, refused or not
      if (options_.max_inflight <= 0 || in_flight <= options_.max_inflight) return httplib::Server::HandlerResponse::Unhandled;
      // Refused before the body is read, so overload costs a header parse, not a buffered body.
      res.status = 429;
      res.set_header("Retry-After", std::to_string(options_.retry_after_s));
      res.set_content(error_body({429, "The server is at its limit of " + std::to_string(options_.max_inflight) +
                                           " requests in flight; retry after " + std::to_string(options_.retry_after_s) + " s",
                                  "requests", "", "rate_limit_exceeded"}),
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer");
    res.set_content(error_body({401, "Missing or invalid bearer token in the Authorization header",
                                "invalid_request_error", "", "invalid_api_key"}),
                    "application/json");
    return httplib::Server::HandlerResponse::Handled;
  });
  // httplib answers an oversized body with a bare 413; give it OpenAI's shape, and the same for
  // unknown paths.
  http.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      res.set_content(error_body({413, "The request body is over the limit of " + std::to_string(options_.max_body_bytes) + " bytes",
                                  "invalid_request_error", "", "request_too_large"}),
                      "application/json");
    } else if (res.status == 404) {
      res.set_content(error_body({404, "No such route", "invalid_request_error", "", "not_found"}), "application/json");
    }
  });
  // httplib calls the logger once per answered request, errors included, after the answer is
  // written: the one place that sees every final status.
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    double seconds = -1;
    if (tl_request.started)
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - tl_request.start).count();
    if (tl_request.admitted) metrics_->leave();
    tl_request = RequestNote{};
    metrics_->record(Metrics::route_label(req.path), res.status, seconds);
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    std::string text = metrics_->exposition();
    if (pipeline_) text += pipeline_exposition(*pipeline_, *replies_);
    res.set_content(text, "text/plain; version=0.0.4");
  });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  http.Get("/readyz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ready\n", "text/plain"); });
  add_token_routes(http, *bindings_, RouteLimits{options_.max_messages});
  add_dashboard_routes(http);
  if (options_.pipeline.input) {
    // A request no worker answers within the request timeout is answered "timeout" by the box, so
    // an asynchronous one cannot hold its --max-queued place forever.
    replies_ = std::make_unique<ReplyBox>(10000, options_.request_timeout);
    PipelineOptions po;
    po.tokenizers = bindings_->models();
    po.workers = options_.workers;
    po.dead_letter_path = options_.dead_letter_path;
    po.decoder = options_.decoder;
    po.max_decodes = options_.max_decodes;
    po.store_text = options_.store_text;
    pipeline_ = std::make_unique<ChatPipeline>(options_.pipeline, po, *replies_);
    add_chat_routes(http, ChatRouteContext{*bindings_, *pipeline_, *replies_, *metrics_,
                                           ChatRouteLimits{options_.max_messages, options_.request_timeout,
                                                           options_.max_queued, options_.retry_after_s,
                                                           options_.max_log_backlog}});
  }
}

Server::~Server() = default;

void Server::bind() {
  if (options_.port == 0) {
    port_ = http_->bind_to_any_port(options_.host.c_str());
  } else {
    port_ = http_->bind_to_port(options_.host.c_str(), options_.port) ? options_.port : -1;
  }
  if (port_ < 0) throw std::runtime_error("cannot listen on " + options_.host + ":" + std::to_string(options_.port));
}

void Server::run() {
  http_->listen_after_bind();
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
  if (!http_done_cv_.wait_until(lock, deadline, [&] { return http_done_; }) && replies_) {
    // Past the deadline: the workers take nothing more up and get a moment to finish what they
    // hold (those requests are answered as usual); whoever still waits then gets 503, whose body
    // says whether the request may still be stored (chat_routes.cpp), so run() can return.
    lock.unlock();
    if (pipeline_) (void)pipeline_->stop_taking(deadline + kFinishGrace);
    replies_->cancel_all();
  }
}

}  // namespace overhead::serve
