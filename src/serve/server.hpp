// The gateway's HTTP server: limits, auth and routing around cpp-httplib. The routes themselves
// live in their own files (token_routes.*); this file owns what every request passes through.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace httplib {
class Server;
}

namespace overhead::serve {

class BindingCache;
class Metrics;

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 0;                    // 0: any free port (bound_port() tells which)
  std::vector<std::string> models; // empty: the seed's tokenizers
  std::string auth_token;          // empty: no auth
  std::size_t max_body_bytes = 1u << 20;
  std::size_t max_messages = 1024;
  int read_timeout_s = 10;   // slow-client protection: headers and body must arrive within this
  int write_timeout_s = 10;
  int idle_timeout_s = 5;
  int threads = 0;           // 0: httplib's default pool
  // Overload: past this many requests in flight a request gets 429 with Retry-After (0: no limit).
  std::int64_t max_inflight = 0;
  int retry_after_s = 1;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; throws std::runtime_error naming host:port when it cannot.
  void bind();
  [[nodiscard]] int bound_port() const { return port_; }
  // Serves until stop(); returns when in-flight requests have been answered.
  void run();
  // Stops accepting and makes run() return; safe from another thread.
  void stop();

 private:
  ServerOptions options_;
  std::unique_ptr<BindingCache> bindings_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = -1;
};

}  // namespace overhead::serve
