#include "serve/server.hpp"

#include <httplib.h>

#include <stdexcept>

#include "serve/api_error.hpp"
#include "serve/bearer_auth.hpp"
#include "serve/binding_cache.hpp"
#include "serve/token_routes.hpp"

namespace overhead::serve {

Server::Server(ServerOptions options)
    : options_(std::move(options)),
      bindings_(std::make_unique<BindingCache>(options_.models)),
      http_(std::make_unique<httplib::Server>()) {
  httplib::Server& http = *http_;
  http.set_payload_max_length(options_.max_body_bytes);
  http.set_read_timeout(options_.read_timeout_s, 0);
  http.set_write_timeout(options_.write_timeout_s, 0);
  http.set_keep_alive_timeout(options_.idle_timeout_s);
  if (options_.threads > 0) {
    const int n = options_.threads;
    http.new_task_queue = [n] { return new httplib::ThreadPool(static_cast<std::size_t>(n)); };
  }
  // Auth runs before routing; health checks stay open so a load balancer needs no secret.
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (options_.auth_token.empty() || req.path == "/healthz" || req.path == "/readyz")
      return httplib::Server::HandlerResponse::Unhandled;
    if (bearer_matches(req.get_header_value("Authorization"), options_.auth_token))
      return httplib::Server::HandlerResponse::Unhandled;
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
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  http.Get("/readyz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ready\n", "text/plain"); });
  add_token_routes(http, *bindings_, RouteLimits{options_.max_messages});
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

void Server::run() { http_->listen_after_bind(); }

void Server::stop() { http_->stop(); }

}  // namespace overhead::serve
