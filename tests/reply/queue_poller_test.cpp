// The one queue poller under the gateway's reply receiver and the worker's control receiver, on a
// real mem: queue: every message is handed on once and then deleted (nothing stays in flight to
// come back), the errors a handler returns are counted, and a receive that fails (a broker
// restarting: a queue that throws on its first receives) is retried until messages flow again.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "reply/queue_poller.hpp"
#include "support/forwarding_queue.hpp"

namespace {

using namespace overhead;
using namespace std::chrono_literals;

// A real queue whose first `failures` receives throw, as a client does while its broker restarts.
class FailingFirstReceives final : public test_support::ForwardingQueue {
 public:
  FailingFirstReceives(std::shared_ptr<ports::Queue> inner, int failures) : ForwardingQueue(std::move(inner)), failures_(failures) {}
  std::vector<ports::Message> receive(std::size_t max, std::chrono::milliseconds wait) override {
    if (failures_.fetch_sub(1) > 0) throw ports::QueueError("connection refused");
    return inner().receive(max, wait);
  }

 private:
  std::atomic<int> failures_;
};

reply::QueuePollerOptions quick_options() {
  reply::QueuePollerOptions o;
  o.receive_wait = 20ms;
  o.retry_pause = 10ms;
  o.receive_failure = "receiving test messages";
  o.unreadable = "unreadable test message";
  return o;
}

template <class Pred>
bool eventually(Pred done) {
  for (int i = 0; i < 500 && !done(); ++i) std::this_thread::sleep_for(10ms);
  return done();
}

TEST(QueuePoller, HandsEachMessageOnOnceDeletesItAndCountsWhatCouldNotBeRead) {
  auto queue = backends::open_queue("mem:");
  const std::vector<std::string> bodies{"a", "bad", "b"};
  (void)queue->send_batch(bodies);
  std::mutex mutex;
  std::vector<std::string> seen;
  reply::QueuePoller poller(queue, quick_options(), [&](ports::Message& m) {
    std::lock_guard lock(mutex);
    seen.push_back(m.body);
    return m.body == "bad" ? std::vector<std::string>{"line 1: not an event"} : std::vector<std::string>{};
  });
  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mutex);
    return seen.size() == 3;
  }));
  EXPECT_TRUE(eventually([&] {
    const auto c = queue->counts();
    return c.visible == 0 && c.in_flight == 0;
  })) << "every message deleted once handed on, the unreadable one too";
  poller.stop();
  EXPECT_EQ(poller.unreadable(), 1u);
  std::lock_guard lock(mutex);
  EXPECT_EQ(seen, bodies) << "each once, in order";
}

TEST(QueuePoller, RetriesAFailingReceiveUntilMessagesFlow) {
  auto inner = backends::open_queue("mem:");
  auto queue = std::make_shared<FailingFirstReceives>(inner, 3);
  (void)inner->send_batch(std::vector<std::string>{"x"});
  std::atomic<int> handled{0};
  reply::QueuePoller poller(queue, quick_options(), [&](ports::Message&) {
    handled.fetch_add(1);
    return std::vector<std::string>{};
  });
  EXPECT_TRUE(eventually([&] { return handled.load() == 1; })) << "the poller kept trying past the failures";
  poller.stop();
  EXPECT_GE(poller.failures(), 3u);
}

TEST(QueuePoller, StopEndsTheThreadWithinItsReceiveWait) {
  auto queue = backends::open_queue("mem:");
  reply::QueuePoller poller(queue, quick_options(), [](ports::Message&) { return std::vector<std::string>{}; });
  const auto start = std::chrono::steady_clock::now();
  poller.stop();
  poller.stop();  // idempotent
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

}  // namespace
