// The pooled HTTP client against a loopback server: warm calls reuse their TCP connections
// (counted on both sides), bodies and headers travel intact, and calls that get no answer fail
// with the right TransportError kind within their timeout.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "aws/http_client.hpp"
#include "loopback_server.hpp"

namespace overhead::aws {
namespace {

using testing::LoopbackServer;

struct CountingServer {
  LoopbackServer server;
  std::mutex mutex;
  std::set<int> client_ports;  // one per TCP connection the client opened
  std::atomic<int> requests{0};

  CountingServer() {
    server.http().Post("/echo", [this](const httplib::Request& req, httplib::Response& res) {
      {
        std::lock_guard lock(mutex);
        client_ports.insert(req.remote_port);
      }
      ++requests;
      res.set_header("X-Echo-Header", req.get_header_value("X-Test"));
      res.set_content(req.body, "application/octet-stream");
    });
    server.start();
  }
  std::size_t connections() {
    std::lock_guard lock(mutex);
    return client_ports.size();
  }
};

HttpRequest echo(const std::string& url, std::string_view body) {
  HttpRequest r;
  r.method = "POST";
  r.url = url + "/echo";
  r.headers = {{"X-Test", "v"}, {"Content-Type", "application/octet-stream"}};
  r.body = body;
  return r;
}

TEST(HttpClient, WarmCallsOpenNoNewConnection) {
  CountingServer s;
  HttpClient client;
  const std::string body = "hello";
  // Warm-up: one sequential call opens the one connection a single thread needs.
  ASSERT_EQ(client.send(echo(s.server.url(), body)).status, 200);
  const auto opened_after_warmup = client.connections_opened();
  const auto server_side_after_warmup = s.connections();
  EXPECT_EQ(opened_after_warmup, 1u);
  for (int i = 0; i < 200; ++i) {
    HttpResponse r = client.send(echo(s.server.url(), body));
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body, body);
  }
  EXPECT_EQ(client.connections_opened(), opened_after_warmup);
  EXPECT_EQ(s.connections(), server_side_after_warmup);
  EXPECT_EQ(s.requests.load(), 201);
}

TEST(HttpClient, ThreadsShareTheConnectionCache) {
  CountingServer s;
  HttpClient client;
  constexpr int kThreads = 4;
  auto run = [&](int calls) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < calls; ++i) ASSERT_EQ(client.send(echo(s.server.url(), "x")).status, 200);
      });
    }
    for (auto& t : threads) t.join();
  };
  run(20);  // warm-up: at most one connection per concurrent caller
  const auto warm = client.connections_opened();
  EXPECT_LE(warm, static_cast<std::uint64_t>(kThreads));
  run(50);
  // Connections are reused; a handful may be added when more callers overlap than before.
  EXPECT_LE(client.connections_opened(), static_cast<std::uint64_t>(kThreads));
  EXPECT_LE(s.connections(), static_cast<std::size_t>(kThreads));
}

TEST(HttpClient, CarriesBinaryBodiesAndHeaders) {
  CountingServer s;
  HttpClient client;
  std::string body(100000, '\0');
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7);
  HttpResponse r = client.send(echo(s.server.url(), body));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, body);
  EXPECT_EQ(r.header("x-echo-header"), "v");
}

TEST(HttpClient, SlowAnswerTimesOut) {
  LoopbackServer server;
  server.http().Get("/slow", [](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    res.set_content("late", "text/plain");
  });
  server.start();
  HttpClient client;
  HttpRequest r;
  r.url = server.url() + "/slow";
  r.timeout = std::chrono::milliseconds(100);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    client.send(r);
    FAIL() << "expected a timeout";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::timeout) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(500));
}

// A listener that accepts and closes at once: the call sees a dropped connection.
TEST(HttpClient, ClosedConnectionIsReportedAsDropped) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ASSERT_EQ(::listen(fd, 4), 0);
  std::thread closer([fd] {
    int c = ::accept(fd, nullptr, nullptr);
    if (c >= 0) {
      char buf[4096];
      (void)::recv(c, buf, sizeof buf, 0);
      ::close(c);
    }
  });
  HttpClient client;
  HttpRequest r;
  r.url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/";
  try {
    client.send(r);
    FAIL() << "expected a dropped connection";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::dropped) << e.what();
  }
  closer.join();
  ::close(fd);
}

TEST(HttpClient, RefusedConnectionIsReportedAsConnect) {
  HttpClient client;
  HttpRequest r;
  r.url = "http://127.0.0.1:1/";
  try {
    client.send(r);
    FAIL() << "expected a refused connection";
  } catch (const TransportError& e) {
    EXPECT_EQ(e.kind(), TransportError::Kind::connect) << e.what();
  }
}

}  // namespace
}  // namespace overhead::aws
