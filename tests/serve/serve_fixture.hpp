// A real `serve::Server` on a free loopback port with a real HTTP client, shared by the serve tests.
#pragma once

#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <thread>

#include "serve/server.hpp"

namespace overhead::serve::testing {

class ServeTest : public ::testing::Test {
 protected:
  // Small limits so the tests can cross them cheaply.
  void start(ServerOptions o) {
    o.max_body_bytes = 4096;
    o.max_messages = 4;
    launch(std::move(o));
  }
  // Binds `o` on a free port, runs it on its own thread and connects a client to it.
  void launch(ServerOptions o) {
    o.port = 0;
    server_ = std::make_unique<Server>(o);
    server_->bind();
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->bound_port());
    // A first request for a model loads its tokenizer (up to a second on a quiet machine, several on
    // a loaded CI box); httplib's 5 s default would fail the test on load, not on behaviour.
    client_->set_read_timeout(120, 0);
  }
  // Stops the server and waits for run() to return.
  void stop() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  void TearDown() override { stop(); }
  nlohmann::json post(const std::string& path, const std::string& body, int expect_status) {
    auto r = client_->Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, expect_status) << path << " " << r->body;
    return nlohmann::json::parse(r->body);
  }
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace overhead::serve::testing
