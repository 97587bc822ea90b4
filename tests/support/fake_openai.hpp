// A fake OpenAI-compatible server on a free loopback port, for the decoder's error paths and for
// deterministic streaming through the pipeline and the gateway (a real engine is tested too: see
// tests/engine). POST /v1/completions streams `tokens` text_completion chunks `interval` apart
// (the first right away), then a usage chunk (unless `usage` is off) and `data: [DONE]`; or
// answers `status` with an error body. Chunk i's text is "t<i> ".
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

namespace overhead::test_support {

class FakeOpenAi {
 public:
  int tokens = 20;
  std::chrono::milliseconds interval{5};
  bool usage = true;
  int status = 200;
  std::atomic<int> hits{0};
  nlohmann::json last_body;
  std::mutex mutex;

  FakeOpenAi() {
    server_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
      ++hits;
      {
        std::lock_guard lock(mutex);
        last_body = nlohmann::json::parse(req.body, nullptr, false);
      }
      if (status != 200) {
        res.status = status;
        res.set_content(R"({"error":{"message":"boom","type":"server_error"}})", "application/json");
        return;
      }
      const int n = tokens;
      const auto gap = interval;
      const bool with_usage = usage;
      res.set_chunked_content_provider("text/event-stream", [n, gap, with_usage](std::size_t, httplib::DataSink& sink) {
        for (int i = 0; i < n; ++i) {
          if (i) std::this_thread::sleep_for(gap);
          const nlohmann::json chunk = {
              {"id", "cmpl-fake"}, {"object", "text_completion"}, {"created", 1}, {"model", "fake"},
              {"choices", {{{"index", 0}, {"text", "t" + std::to_string(i) + " "}, {"logprobs", nullptr}, {"finish_reason", nullptr}}}}};
          const std::string ev = "data: " + chunk.dump() + "\n\n";
          if (!sink.write(ev.data(), ev.size())) return false;
        }
        std::string tail;
        if (with_usage) {
          const nlohmann::json last = {{"id", "cmpl-fake"}, {"object", "text_completion"}, {"created", 1}, {"model", "fake"},
                                       {"choices", nlohmann::json::array()},
                                       {"usage", {{"prompt_tokens", 3}, {"completion_tokens", n}, {"total_tokens", n + 3}}}};
          tail += "data: " + last.dump() + "\n\n";
        }
        tail += "data: [DONE]\n\n";
        sink.write(tail.data(), tail.size());
        sink.done();
        return true;
      });
    });
    server_.set_keep_alive_max_count(1);  // close after each answer, so stop() need not wait for an idle client
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeOpenAi() {
    server_.stop();
    thread_.join();
  }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace overhead::test_support
