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
#include "serve_fixture.hpp"

namespace overhead::serve::testing {

class ChatServeTest : public ServeTest {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("overhead_serve_chat_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  // The server with its pipeline; run() returns from stop() once the pipeline stored what it published.
  void start(ServerOptions o = {}) {
    if (o.models.empty()) o.models = {"phi-4", "gemma-2-27b-it"};
    o.pipeline.input = backends::open_queue("mem:");
    if (!o.pipeline.log) o.pipeline.log = backends::open_queue("mem:");
    store_url_ = "sqlite:" + (dir_ / "serve.db").string();
    o.pipeline.store = std::shared_ptr<ports::Store>(backends::open_store(store_url_));
    store_ = o.pipeline.store;
    launch(std::move(o));
  }
  void TearDown() override {
    stop();
    server_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;
  std::string store_url_;
  std::shared_ptr<ports::Store> store_;
};

}  // namespace overhead::serve::testing
