// --max-inflight: a client that sends its headers and holds back the body keeps a slot in flight;
// the next request gets 429 with Retry-After and OpenAI's error body, and once the slot is freed
// requests are served again.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "serve_fixture.hpp"

namespace {

using OverloadTest = overhead::serve::testing::ServeTest;
using nlohmann::json;

// A TCP connection written and read by hand, so the test decides when the body goes out.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  [[nodiscard]] bool connected() const { return connected_; }
  bool send_all(const std::string& s) {
    std::size_t done = 0;
    while (done < s.size()) {
      const ssize_t n = ::send(fd_, s.data() + done, s.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }
  // Reads until the peer closes (the request asks for Connection: close).
  std::string read_all() {
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd_, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }

 private:
  int fd_;
  bool connected_ = false;
};

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
  client_->set_keep_alive(true);  // one server thread records each request before the next scrape
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
  ASSERT_TRUE(slow.send_all("POST /v1/tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 10\r\n\r\n"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight(*client_) != 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_EQ(in_flight(*client_), 1);
  EXPECT_EQ(client_->Post("/v1/tokenize", R"({"model":"phi-4","prompt":"a"})", "application/json")->status, 200);
}

}  // namespace
