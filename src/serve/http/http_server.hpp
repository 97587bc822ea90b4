// The gateway's HTTP/1.1 server: an event loop (Boost.Asio/Beast) on a few threads owns every
// connection, so an idle kept-alive connection costs a socket and a few kilobytes, never a thread;
// route handlers run on a bounded pool of handler threads. Per request, in order: the headers
// (whole-request deadline from the first byte), the route (routes.hpp), the application's checks
// (auth, then 404/405/415, then admission; none of them reads the body), the body (limit enforced
// while reading, chunked included), the handler, the answer. What the application decides (auth,
// the in-flight limit, error bodies, metrics) comes through Gatekeeper.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "serve/http/exchange.hpp"
#include "serve/http/message.hpp"
#include "serve/http/routes.hpp"

namespace overhead::serve::http {

struct ServerLimits {
  std::size_t max_body_bytes = 1u << 20;    // past it: 413 while reading (Content-Length or chunked)
  std::size_t max_header_bytes = 16u << 10; // request line and fields; past it: 431
  // From a request's first byte to its last (headers and body): a client trickling bytes is cut
  // at this deadline, whatever the pace of each byte.
  std::chrono::milliseconds read_timeout{10000};
  std::chrono::milliseconds write_timeout{10000};  // each write of an answer or of a stream's chunks
  // A kept-alive connection waiting for its next request's first byte. Longer than the idle
  // timeouts of the load balancers and client pools in front (60 s for AWS ALB), so the server is
  // not the side that closes a connection a client is about to reuse.
  std::chrono::milliseconds idle_timeout{75000};
  // A stream's chunks waiting to be written, past which push() says `full` (exchange.hpp).
  std::size_t max_stream_queue_bytes = 1u << 20;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                      // 0: any free port
  unsigned event_loop_threads = 0;   // 0: one per core, at most 4
  unsigned handler_threads = 0;      // 0: one per core, at least 8
  // Requests read and waiting for a handler thread past which a request gets 503 (Retry-After):
  // the memory held by requests read ahead of the handlers stays bounded.
  std::size_t max_waiting_requests = 1024;
  int retry_after_s = 1;
  ServerLimits limits;
};

// The application's decisions around every request. Called on event-loop threads (finished() also
// on handler threads): each must be quick and must not block.
class Gatekeeper {
 public:
  virtual ~Gatekeeper() = default;
  // After the headers, before anything else: a refusal (401) or nothing. `route` is null when
  // no route has this method and path.
  virtual std::optional<Response> authorize(const Request& req, const Route* route) = 0;
  // After routing, before the body is read: a refusal (429) or nothing. Set `counted` when the
  // request was counted; it comes back in finished().
  virtual std::optional<Response> admit(const Request& req, const Route& route, bool& counted) = 0;
  // The server's own refusals (400, 404, 405, 413, 415, 431, 500, 503) in the application's shape.
  virtual Response error(int status, const std::string& message, const std::string& code) = 0;
  // Once per request that reached its headers: when its answer's last byte is written (status),
  // when the client went away first (499), or when it was cut at the read deadline (408).
  // `seconds` runs from the headers' arrival; < 0 when not taken.
  virtual void finished(std::string_view label, int status, double seconds, bool counted) = 0;
};

class HttpServer {
 public:
  // `routes` and `gate` must outlive the server.
  HttpServer(HttpServerOptions options, const Routes& routes, Gatekeeper& gate);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port. Throws std::runtime_error naming host:port.
  int bind();
  // Serves until stop() (or abort()) and returns once every connection is closed and every
  // handler has returned.
  void run();
  // Stops accepting and closes idle connections; requests in progress are answered, then their
  // connections close. Safe from any thread, before or during run().
  void stop();
  // Closes every connection now: requests in progress see their client gone (cancel callbacks).
  void abort();
  [[nodiscard]] std::size_t open_connections() const;
  [[nodiscard]] std::size_t waiting_requests() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace overhead::serve::http
