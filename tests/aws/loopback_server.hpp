// A small HTTP server on 127.0.0.1 for the tests of what no real service can stand in for here:
// counting the TCP connections a client opens, answering slowly or with errors on purpose, and
// (later) the EC2 metadata service and the Lambda Runtime API. Runs cpp-httplib on its own thread
// and picks a free port.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

namespace overhead::aws::testing {

// Static test keys in the environment, the first link of the credential chain, with no session
// token and IMDS off, so a test against a loopback server never waits on a metadata lookup.
inline void use_test_keys(const char* access_key_id, const char* secret) {
  setenv("AWS_ACCESS_KEY_ID", access_key_id, 1);
  setenv("AWS_SECRET_ACCESS_KEY", secret, 1);
  unsetenv("AWS_SESSION_TOKEN");
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

class LoopbackServer {
 public:
  LoopbackServer() {
    server_.set_keep_alive_max_count(100000);
    server_.set_keep_alive_timeout(30);
    server_.set_tcp_nodelay(true);
  }
  ~LoopbackServer() { stop(); }
  httplib::Server& http() { return server_; }

  // Binds and serves; call after registering handlers.
  void start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("loopback server: cannot bind");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  void stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace overhead::aws::testing
