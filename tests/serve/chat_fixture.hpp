// A `serve::Server` with its pipeline on the embedded default (mem: queues, a SQLite store in a
// fresh temporary folder) on a free loopback port, and a real HTTP client; shared by the chat tests.
#pragma once

#include <httplib.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "serve/server.hpp"

namespace overhead::serve::testing {

class ChatServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("overhead_serve_chat_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void start(ServerOptions o = {}) {
    o.port = 0;
    if (o.models.empty()) o.models = {"phi-4", "gemma-2-27b-it"};
    o.pipeline.input = backends::open_queue("mem:");
    o.pipeline.log = backends::open_queue("mem:");
    store_url_ = "sqlite:" + (dir_ / "serve.db").string();
    o.pipeline.store = std::shared_ptr<pipe::Store>(backends::open_store(store_url_));
    store_ = o.pipeline.store;
    server_ = std::make_unique<Server>(o);
    server_->bind();
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->bound_port());
    client_->set_read_timeout(120, 0);
  }
  // Stops the server; run() returns once the pipeline stored what it published.
  void stop() {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  void TearDown() override {
    stop();
    server_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  nlohmann::json post(const std::string& path, const std::string& body, int expect_status) {
    auto r = client_->Post(path.c_str(), body, "application/json");
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, expect_status) << path << " " << r->body;
    return nlohmann::json::parse(r->body);
  }
  std::filesystem::path dir_;
  std::string store_url_;
  std::shared_ptr<pipe::Store> store_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace overhead::serve::testing
