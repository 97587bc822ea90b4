// The HTTP layer alone (serve/http/): a real HttpServer on a free loopback port with a few test
// routes, driven by a real client (cpp-httplib) or by hand over a raw socket. What a handler can
// do besides a plain answer: defer it and answer from another thread exactly once, or stream
// chunks pushed from other threads (in order, with a bounded queue that says when it is full and
// when it has room again, and a callback when the client goes away). And the route table itself.
#include <httplib.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "raw_connection.hpp"
#include "serve/http/http_server.hpp"

namespace {

using namespace std::chrono_literals;
using namespace overhead::serve::http;
using overhead::serve::testing::RawConnection;

// Lets everything through; errors are their code in a plain body; finished requests are noted.
class RecordingGate final : public Gatekeeper {
 public:
  std::optional<Response> authorize(const Request&, const Route*) override { return std::nullopt; }
  std::optional<Response> admit(const Request&, const Route&, bool& counted) override {
    counted = true;
    return std::nullopt;
  }
  Response error(int status, const std::string&, const std::string& code) override {
    Response r;
    r.status = status;
    r.set_content(code, "text/plain");
    return r;
  }
  void finished(std::string_view label, int status, double, bool counted) override {
    std::lock_guard lock(mutex_);
    finished_.push_back(std::string(label) + " " + std::to_string(status) + (counted ? "" : " uncounted"));
  }
  std::vector<std::string> finished_requests() {
    std::lock_guard lock(mutex_);
    return finished_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> finished_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void start(ServerLimits limits = {}) {
    HttpServerOptions o;
    o.handler_threads = 2;
    o.event_loop_threads = 2;
    o.limits = limits;
    server_ = std::make_unique<HttpServer>(o, routes_, gate_);
    port_ = server_->bind();
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    client_->set_read_timeout(30, 0);
  }
  void TearDown() override {
    for (auto& t : producers_) t.join();
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  // A producer thread, joined before the server stops.
  template <class F>
  void produce(F f) {
    std::lock_guard lock(producers_mutex_);
    producers_.emplace_back(std::move(f));
  }
  // Waits until `n` requests have finished.
  std::vector<std::string> finished(std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (gate_.finished_requests().size() < n && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(5ms);
    return gate_.finished_requests();
  }

  Routes routes_;
  RecordingGate gate_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
  std::thread thread_;
  std::unique_ptr<httplib::Client> client_;
  std::mutex producers_mutex_;
  std::vector<std::thread> producers_;
};

TEST_F(HttpServerTest, AStreamPushedFromOtherThreadsArrivesInOrder) {
  constexpr int kChunks = 3000;
  routes_.get("/count", [this](const Request&, Response& res) {
    auto stream = res.stream("text/plain");
    // Two producers in turn: the first pushes half, then hands the stream to the second. The
    // push never blocks: it is retried while the queue is full.
    produce([stream] {
      const auto push_lines = [stream](int from, int to) {
        for (int i = from; i < to; ++i) {
          PushResult r;
          while ((r = stream->push(std::to_string(i) + "\n")) == PushResult::full) std::this_thread::sleep_for(1ms);
          ASSERT_EQ(r, PushResult::queued);
        }
      };
      std::thread first([&] { push_lines(0, kChunks / 2); });
      first.join();
      std::thread second([&] {
        push_lines(kChunks / 2, kChunks);
        stream->close();
      });
      second.join();
    });
  });
  start();
  auto r = client_->Get("/count");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Transfer-Encoding"), "chunked");
  std::istringstream in(r->body);
  std::string line;
  int expected = 0;
  while (std::getline(in, line)) {
    ASSERT_EQ(line, std::to_string(expected)) << "chunk " << expected << " out of order";
    ++expected;
  }
  EXPECT_EQ(expected, kChunks);
  EXPECT_EQ(finished(1), std::vector<std::string>{"/count 200"});
}

TEST_F(HttpServerTest, AClientThatDisconnectsFiresTheCancelCallback) {
  std::promise<void> cancelled;
  std::shared_ptr<ResponseStream> kept;
  std::mutex kept_mutex;
  routes_.get("/forever", [&](const Request&, Response& res) {
    auto stream = res.stream("text/event-stream");
    stream->on_cancel([&cancelled] { cancelled.set_value(); });
    {
      // Kept before the first push: the client's read of it, its leaving and the cancel all come
      // after, so the test never reads `kept` before this handler set it.
      std::lock_guard lock(kept_mutex);
      kept = stream;  // never closed by the producer
    }
    EXPECT_EQ(stream->push("data: first\n\n"), PushResult::queued);
  });
  start();
  {
    RawConnection c(port_);
    ASSERT_TRUE(c.connected());
    ASSERT_TRUE(c.send_all("GET /forever HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    const std::string got = c.read_until("first", 5000ms);
    ASSERT_NE(got.find("data: first"), std::string::npos) << got;
  }  // the client closes its socket mid-stream
  ASSERT_EQ(cancelled.get_future().wait_for(5s), std::future_status::ready) << "no cancel callback after the client left";
  std::lock_guard lock(kept_mutex);
  EXPECT_TRUE(kept->cancelled());
  EXPECT_EQ(kept->push("data: nobody reads this\n\n"), PushResult::closed);
  EXPECT_EQ(finished(1), std::vector<std::string>{"/forever 499"});
  // A callback set after the fact runs at once.
  bool late = false;
  kept->on_cancel([&] { late = true; });
  EXPECT_TRUE(late);
}

TEST_F(HttpServerTest, ADeferredAnswerComesFromAnotherThreadExactlyOnce) {
  std::atomic<int> second_send{-1};
  routes_.get("/later", [&](const Request&, Response& res) {
    auto responder = res.defer();
    produce([responder, &second_send] {
      std::this_thread::sleep_for(50ms);
      Response answer;
      answer.set_content("late", "text/plain");
      EXPECT_TRUE(responder->send(answer));
      second_send = responder->send(answer) ? 1 : 0;
    });
  });
  routes_.get("/dropped", [this](const Request&, Response& res) {
    auto responder = res.defer();
    produce([responder]() mutable { responder.reset(); });  // dropped unanswered
  });
  start();
  client_->set_keep_alive(true);
  auto r = client_->Get("/later");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "late");
  auto d = client_->Get("/dropped");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->status, 500);
  EXPECT_EQ(d->body, "internal_error");
  for (auto& t : producers_) t.join();
  producers_.clear();
  EXPECT_EQ(second_send.load(), 0) << "a second answer was accepted";
  EXPECT_EQ(finished(2), (std::vector<std::string>{"/later 200", "/dropped 500"}));
}

TEST_F(HttpServerTest, AFullQueueHoldsTheProducerBackUntilTheClientReads) {
  ServerLimits limits;
  limits.max_stream_queue_bytes = 64u << 10;
  constexpr std::size_t kTotal = 32u << 20, kChunk = 16u << 10;
  struct Shared {
    std::atomic<std::size_t> pushed{0};
    std::atomic<int> fulls{0};
    std::mutex mutex;
    std::condition_variable cv;
    bool room = false;
  };
  auto shared = std::make_shared<Shared>();
  routes_.get("/flood", [this, shared](const Request&, Response& res) {
    auto stream = res.stream("application/octet-stream");
    stream->on_writable([shared] {
      std::lock_guard lock(shared->mutex);
      shared->room = true;
      shared->cv.notify_all();
    });
    produce([stream, shared] {
      const std::string chunk(kChunk, 'x');
      while (shared->pushed < kTotal) {
        const PushResult r = stream->push(std::string(chunk));
        if (r == PushResult::closed) break;
        if (r == PushResult::queued) {
          shared->pushed += kChunk;
          continue;
        }
        ++shared->fulls;  // wait for on_writable, then try again
        std::unique_lock lock(shared->mutex);
        shared->cv.wait_for(lock, 10s, [&] { return shared->room; });
        shared->room = false;
      }
      stream->close();
    });
  });
  start(limits);
  RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send_all("GET /flood HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  // Nobody reads: the socket's buffers fill, then the queue; the producer is held back.
  std::this_thread::sleep_for(500ms);
  const std::size_t held_at = shared->pushed;
  EXPECT_GT(shared->fulls.load(), 0);
  EXPECT_LT(held_at, kTotal / 2) << "the producer was not held back";
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(shared->pushed.load(), held_at) << "pushes went on while nobody read";
  // Reading lets it all through, in full.
  const std::string all = c.read_all();
  std::size_t xs = 0;
  for (const char ch : all) xs += ch == 'x';
  EXPECT_EQ(xs, kTotal);
  EXPECT_NE(all.find("\r\n0\r\n\r\n"), std::string::npos);
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  routes_.get("/echo/{word}", [](const Request& req, Response& res) { res.set_content(req.path_params.at("word"), "text/plain"); });
  start();
  RawConnection c(port_);
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send_all("GET /echo/one HTTP/1.1\r\nHost: x\r\n\r\nGET /echo/two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string all = c.read_all();
  const auto one = all.find("\r\n\r\none");
  const auto two = all.find("\r\n\r\ntwo");
  ASSERT_NE(one, std::string::npos) << all;
  ASSERT_NE(two, std::string::npos) << all;
  EXPECT_LT(one, two);
}

TEST(Routes, ExactPatternsWinThenParametersThen405WithAllow) {
  Routes routes;
  const Handler h = [](const Request&, Response&) {};
  routes.get("/v1/requests/{id}", h);
  routes.post("/v1/requests", h);
  routes.get("/v1/requests/special", h, RouteOptions{"special", false, false, false, true});
  routes.post("/v1/tokenize", h);

  auto m = routes.match("GET", "/v1/requests/req_ab-12");
  ASSERT_TRUE(m.route);
  EXPECT_EQ(m.route->options.label, "/v1/requests/{id}");  // the pattern is the default label
  EXPECT_EQ(m.params.at("id"), "req_ab-12");
  EXPECT_EQ(routes.match("GET", "/v1/requests/special").route->options.label, "special");
  EXPECT_TRUE(routes.match("HEAD", "/v1/requests/x").route);  // HEAD finds GET

  // A parameter is one segment of A-Z a-z 0-9 _ -, 1 to 64 long.
  EXPECT_FALSE(routes.match("GET", "/v1/requests/a/b").route);
  EXPECT_FALSE(routes.match("GET", "/v1/requests/a.b").route);
  EXPECT_FALSE(routes.match("GET", "/v1/requests/" + std::string(65, 'a')).route);
  EXPECT_FALSE(routes.match("GET", "/v1/requests/").route);

  auto wrong = routes.match("GET", "/v1/tokenize");
  EXPECT_FALSE(wrong.route);
  EXPECT_TRUE(wrong.path_known);
  EXPECT_EQ(wrong.allowed, "POST");
  EXPECT_EQ(wrong.any->options.label, "/v1/tokenize");
  auto get_only = routes.match("DELETE", "/v1/requests/x");
  EXPECT_TRUE(get_only.path_known);
  EXPECT_EQ(get_only.allowed, "GET, HEAD");
  auto unknown = routes.match("GET", "/nope");
  EXPECT_FALSE(unknown.route);
  EXPECT_FALSE(unknown.path_known);

  EXPECT_THROW(routes.post("/v1/tokenize", h), std::invalid_argument);
  EXPECT_THROW(routes.get("no-slash", h), std::invalid_argument);
  EXPECT_THROW(routes.get("/a{b}", h), std::invalid_argument);
}

}  // namespace
