// What a client controls about a connection cannot take the gateway's service away (issue 21,
// defects 3, 4 and 14), each over loopback against a real `serve::Server`:
// - a chunked body past --max-body-bytes gets 413 while it is being sent, not after the server
//   buffered it (the client is stopped after a bounded number of bytes);
// - connections trickling a request a byte at a time hold no thread: /healthz and a normal request
//   are answered meanwhile, and each trickled request is cut at its whole-request deadline
//   (--read-timeout from its first byte), however regularly its bytes arrive;
// - 200 idle kept-alive connections hold no thread: a new client is served at once.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "raw_connection.hpp"
#include "serve_fixture.hpp"

namespace {

using namespace std::chrono_literals;
using overhead::serve::ServerOptions;
using overhead::serve::testing::RawConnection;
using Clock = std::chrono::steady_clock;
using ConnectionLimitsTest = overhead::serve::testing::ServeTest;

const std::string kTokenize = R"({"model":"phi-4","prompt":"hello there"})";

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

TEST_F(ConnectionLimitsTest, AChunkedBodyPastTheLimitIs413WhileItIsSent) {
  start({});  // --max-body-bytes 4096
  RawConnection c(server_->bound_port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send_all("POST /v1/tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         "Transfer-Encoding: chunked\r\n\r\n"));
  // Up to 64 MiB in 64 KiB chunks, until the server stops taking them.
  constexpr std::size_t kChunk = 64u << 10, kMost = 64u << 20;
  std::atomic<std::size_t> sent{0};
  std::thread sender([&] {
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", kChunk);
    const std::string chunk = size + std::string(kChunk, 'a') + "\r\n";
    while (sent < kMost && c.send_all(chunk)) sent += kChunk;
  });
  const std::string answer = c.read_until("request_too_large", 20000ms);
  sender.join();
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("\"code\":\"request_too_large\""), std::string::npos) << answer.substr(0, 400);
  // The server read the limit, a bounded drain and what the sockets' buffers hold; not the body.
  EXPECT_LT(sent.load(), kMost / 2) << "the server kept reading a body past its limit";
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
}

TEST_F(ConnectionLimitsTest, SlowlorisNeitherStopsServiceNorOutlivesTheRequestDeadline) {
  ServerOptions o;
  o.read_timeout_s = 2;
  start(o);
  client_->set_read_timeout(3, 0);  // a starved gateway fails the test in seconds, not minutes
  ASSERT_EQ(client_->Post("/v1/tokenize", kTokenize, "application/json")->status, 200);  // tokenizer loaded

  // 16 connections (twice the 8 threads a thread-per-connection server would have) each send a
  // request line, then one header byte every 250 ms: never idle long enough for a per-read timeout.
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server_->bound_port()));
    ASSERT_TRUE(slow.back()->connected());
    ASSERT_TRUE(slow.back()->send_all("POST /v1/tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "));
  }
  const auto began = Clock::now();
  std::atomic<bool> trickling{true};
  std::thread trickler([&] {
    while (trickling) {
      for (auto& c : slow) (void)c->send_all("x");  // fails quietly once the server has cut it
      std::this_thread::sleep_for(250ms);
    }
  });

  // Meanwhile service goes on.
  for (int i = 0; i < 3; ++i) {
    const auto t = Clock::now();
    auto h = client_->Get("/healthz");
    ASSERT_TRUE(h) << "/healthz unanswered under slowloris";
    EXPECT_EQ(h->status, 200);
    auto r = client_->Post("/v1/tokenize", kTokenize, "application/json");
    ASSERT_TRUE(r) << "a normal request unanswered under slowloris";
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(ms_since(t), 1000.0);
    std::this_thread::sleep_for(200ms);
  }

  // Every trickled request is cut at its deadline: 2 s from its first byte, not later.
  for (auto& c : slow) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(began + 4500ms - Clock::now());
    EXPECT_TRUE(c->closed_by_peer(std::max(left, 1ms))) << "a trickled request outlived --read-timeout";
  }
  const double cut_after = ms_since(began);
  trickling = false;
  trickler.join();
  EXPECT_GE(cut_after, 1500.0) << "cut before its deadline";
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  // The cut requests are counted (408, no answer sent).
  const std::string metrics = client_->Get("/metrics")->body;
  EXPECT_NE(metrics.find("overhead_http_requests_total{route=\"other\",status=\"408\"} 16"), std::string::npos) << metrics;
}

TEST_F(ConnectionLimitsTest, TwoHundredIdleKeptAliveConnectionsDoNotDelayANewClient) {
  start({});
  client_->set_read_timeout(3, 0);
  ASSERT_EQ(client_->Post("/v1/tokenize", kTokenize, "application/json")->status, 200);  // tokenizer loaded
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server_->bound_port()));
    ASSERT_TRUE(idle.back()->connected());
    // One request each, kept alive (HTTP/1.1's default), then nothing.
    ASSERT_TRUE(idle.back()->send_all("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    ASSERT_NE(idle.back()->read_until("ok\n", 5000ms).find("ok\n"), std::string::npos) << "connection " << i;
  }
  for (int i = 0; i < 5; ++i) {
    const auto t = Clock::now();
    auto r = client_->Post("/v1/tokenize", kTokenize, "application/json");
    ASSERT_TRUE(r) << "a new client starved by idle connections";
    EXPECT_EQ(r->status, 200);
    EXPECT_LT(ms_since(t), 500.0);
  }
  const std::string metrics = client_->Get("/metrics")->body;
  const std::string key = "\noverhead_http_connections_open ";
  const auto at = metrics.find(key);
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_GE(std::stoi(metrics.substr(at + key.size())), 200);
}

}  // namespace
