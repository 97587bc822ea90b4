// --max-inflight: a client that sends its headers and holds back the body keeps a slot in flight;
// the next request gets 429 with Retry-After and OpenAI's error body, and once the slot is freed
// requests are served again.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "raw_connection.hpp"
#include "serve_fixture.hpp"

namespace {

using OverloadTest = overhead::serve::testing::ServeTest;
using nlohmann::json;
using overhead::serve::testing::RawConnection;

double in_flight(httplib::Client& client) {
  auto r = client.Get("/metrics");
  if (!r) return -1;
  const std::string key = "\noverhead_http_requests_in_flight ";
  const auto at = r->body.find(key);
  return at == std::string::npos ? -1 : std::stod(r->body.substr(at + key.size()));
}

TEST_F(OverloadTest, PastTheLimitA429WithRetryAfter) {
  overhead::serve::ServerOptions o;
  o.max_inflight = 1;
  o.retry_after_s = 2;
  start(o);
  client_->set_keep_alive(true);  // each request is recorded before the next one on the connection is read
  const std::string body = R"({"model":"phi-4","prompt":"held back"})";
  RawConnection slow(server_->bound_port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.send_all("POST /v1/tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            "Content-Type: application/json\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n"));
  // Health and scrapes are outside the limit, so the gauge can be watched while the slot is held.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight(*client_) != 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(in_flight(*client_), 1);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);

  auto refused = client_->Post("/v1/tokenize", body, "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_EQ(refused->get_header_value("Retry-After"), "2");
  const json e = json::parse(refused->body);
  EXPECT_EQ(e["error"]["code"], "rate_limit_exceeded");
  EXPECT_TRUE(e["error"]["message"].is_string());
  EXPECT_TRUE(e["error"]["param"].is_null());

  // The held request still completes, and then the slot is free again.
  ASSERT_TRUE(slow.send_all(body));
  const std::string answer = slow.read_all();
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find("\"count\""), std::string::npos) << answer;
  const auto deadline2 = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight(*client_) != 0 && std::chrono::steady_clock::now() < deadline2)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(client_->Post("/v1/tokenize", body, "application/json")->status, 200);
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("overhead_http_requests_total{route=\"/v1/tokenize\",status=\"429\"} 1\n"), std::string::npos) << m->body;
}

TEST_F(OverloadTest, NoLimitByDefault) {
  start({});
  RawConnection slow(server_->bound_port());
  ASSERT_TRUE(slow.connected());
  ASSERT_TRUE(slow.send_all("POST /v1/tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                            "Content-Type: application/json\r\nContent-Length: 10\r\n\r\n"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight(*client_) != 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(in_flight(*client_), 1);
  EXPECT_EQ(client_->Post("/v1/tokenize", R"({"model":"phi-4","prompt":"a"})", "application/json")->status, 200);
}

}  // namespace
