// Queue semantics, the same for every backend: batch limits, receipts, visibility timeout and
// redelivery, stale receipts, delete, extend, and the move to the dead-letter queue.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>

#include "backends/open.hpp"
#include "pipe/errors.hpp"
#include "pipe/queue.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using backends::open_queue;
namespace {

using std::chrono::milliseconds;
using testing::ManualClock;

class QueueSemantics : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("queue");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A fresh queue of the backend under test with the given parameters.
  std::shared_ptr<Queue> make(const std::string& params) {
    if (GetParam() == "mem") return open_queue("mem:?" + params, clock_.fn());
    return open_queue("sqlite-queue:" + (dir_ / "q.db").string() + "?name=q" + std::to_string(++n_) + "&" + params,
                      clock_.fn());
  }

  std::vector<std::string> bodies(int n, const std::string& prefix = "m") {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
  }

  ManualClock clock_;
  std::filesystem::path dir_;
  int n_ = 0;
};

TEST_P(QueueSemantics, BatchLimitsAreTen) {
  auto q = make("visibility_ms=1000");
  EXPECT_THROW(q->send_batch(bodies(11)), QueueError);
  EXPECT_THROW(q->send_batch(std::vector<std::string>{}), QueueError);
  EXPECT_EQ(q->send_batch(bodies(10)).size(), 10u);
  EXPECT_THROW(q->receive(11, milliseconds(0)), QueueError);
  EXPECT_THROW(q->receive(0, milliseconds(0)), QueueError);
  auto got = q->receive(10, milliseconds(0));
  ASSERT_EQ(got.size(), 10u);
  std::vector<std::string> receipts;
  for (auto& m : got) receipts.push_back(m.receipt);
  receipts.push_back(receipts.front());
  EXPECT_THROW(q->delete_batch(receipts), QueueError);
}

TEST_P(QueueSemantics, ReceiveTakesAtMostMaxAndHidesWhatItTook) {
  auto q = make("visibility_ms=1000");
  q->send_batch(bodies(7));
  auto a = q->receive(5, milliseconds(0));
  auto b = q->receive(5, milliseconds(0));
  auto c = q->receive(5, milliseconds(0));
  EXPECT_EQ(a.size(), 5u);
  EXPECT_EQ(b.size(), 2u);
  EXPECT_TRUE(c.empty());
  std::set<std::string> seen;
  for (auto* v : {&a, &b})
    for (auto& m : *v) {
      EXPECT_EQ(m.receive_count, 1);
      seen.insert(m.body);
    }
  EXPECT_EQ(seen.size(), 7u);
  const QueueCounts counts = q->counts();
  EXPECT_EQ(counts.visible, 0u);
  EXPECT_EQ(counts.in_flight, 7u);
}

TEST_P(QueueSemantics, DeletedMessagesNeverComeBack) {
  auto q = make("visibility_ms=1000");
  q->send_batch(bodies(3));
  auto got = q->receive(10, milliseconds(0));
  ASSERT_EQ(got.size(), 3u);
  std::vector<std::string> receipts;
  for (auto& m : got) receipts.push_back(m.receipt);
  EXPECT_TRUE(q->delete_batch(receipts).empty());
  clock_.advance(5000);
  EXPECT_TRUE(q->receive(10, milliseconds(0)).empty());
  EXPECT_EQ(q->counts().in_flight, 0u);
  EXPECT_EQ(q->counts().visible, 0u);
}

TEST_P(QueueSemantics, VisibilityExpiryRedeliversWithNewReceiptAndInvalidatesTheOld) {
  auto q = make("visibility_ms=1000");
  q->send_batch(bodies(1));
  auto first = q->receive(1, milliseconds(0));
  ASSERT_EQ(first.size(), 1u);
  clock_.advance(999);
  EXPECT_TRUE(q->receive(1, milliseconds(0)).empty()) << "still invisible before the timeout";
  clock_.advance(2);
  auto second = q->receive(1, milliseconds(0));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].id, first[0].id);
  EXPECT_EQ(second[0].body, first[0].body);
  EXPECT_EQ(second[0].receive_count, 2);
  EXPECT_NE(second[0].receipt, first[0].receipt);
  // The first receipt is stale: neither delete nor extend work with it.
  EXPECT_FALSE(q->change_visibility(first[0].receipt, milliseconds(5000)));
  auto failed = q->delete_batch(std::vector<std::string>{first[0].receipt});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], first[0].receipt);
  // The current one works.
  EXPECT_TRUE(q->delete_batch(std::vector<std::string>{second[0].receipt}).empty());
  clock_.advance(10000);
  EXPECT_TRUE(q->receive(1, milliseconds(0)).empty());
}

TEST_P(QueueSemantics, ExtendVisibilityPostponesRedelivery) {
  auto q = make("visibility_ms=1000");
  q->send_batch(bodies(1));
  auto got = q->receive(1, milliseconds(0));
  ASSERT_EQ(got.size(), 1u);
  clock_.advance(800);
  EXPECT_TRUE(q->change_visibility(got[0].receipt, milliseconds(1000)));
  clock_.advance(800);  // 1600 after receive: past the original timeout, within the extension
  EXPECT_TRUE(q->receive(1, milliseconds(0)).empty());
  clock_.advance(300);
  auto again = q->receive(1, milliseconds(0));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].receive_count, 2);
}

TEST_P(QueueSemantics, ZeroVisibilityReleasesAtOnce) {
  auto q = make("visibility_ms=1000");
  q->send_batch(bodies(1));
  auto got = q->receive(1, milliseconds(0));
  ASSERT_TRUE(q->change_visibility(got[0].receipt, milliseconds(0)));
  EXPECT_EQ(q->receive(1, milliseconds(0)).size(), 1u);
}

TEST_P(QueueSemantics, MovesToDeadLetterQueueAfterMaxReceives) {
  auto q = make("visibility_ms=100&max_receives=3");
  q->send_batch(std::vector<std::string>{"poison", "good"});
  auto dlq = q->dead_letter_queue();
  ASSERT_NE(dlq, nullptr);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto got = q->receive(10, milliseconds(0));
    ASSERT_EQ(got.size(), attempt == 1 ? 2u : 1u) << "attempt " << attempt;
    for (auto& m : got) {
      if (m.body == "good") q->delete_batch(std::vector<std::string>{m.receipt});
      else EXPECT_EQ(m.receive_count, attempt);
    }
    clock_.advance(101);
  }
  // A fourth receive would exceed max_receives: the message goes to the DLQ instead.
  EXPECT_TRUE(q->receive(10, milliseconds(0)).empty());
  auto dead = dlq->receive(10, milliseconds(0));
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].body, "poison");
  EXPECT_EQ(q->counts().visible + q->counts().in_flight, 0u);
}

TEST_P(QueueSemantics, NoDeadLetterQueueWithoutMaxReceives) {
  auto q = make("visibility_ms=100");
  EXPECT_EQ(q->dead_letter_queue(), nullptr);
  q->send_batch(bodies(1));
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(q->receive(1, milliseconds(0)).size(), 1u);
    clock_.advance(101);
  }
}

TEST_P(QueueSemantics, WaitReturnsWhenAMessageArrives) {
  auto q = make("visibility_ms=1000");
  std::thread sender([&] {
    std::this_thread::sleep_for(milliseconds(30));
    q->send_batch(std::vector<std::string>{"late"});
  });
  auto got = q->receive(10, milliseconds(5000));
  sender.join();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "late");
}

TEST_P(QueueSemantics, ConcurrentReceiversNeverShareAMessage) {
  auto q = make("visibility_ms=60000");
  const int n = 400;
  for (int i = 0; i < n; i += 10) q->send_batch(bodies(10, "b" + std::to_string(i) + "-"));
  std::mutex m;
  std::vector<std::string> all;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (;;) {
        auto got = q->receive(10, milliseconds(0));
        if (got.empty()) return;
        std::lock_guard lock(m);
        for (auto& x : got) all.push_back(x.id);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(all.size(), std::size_t(n));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), std::size_t(n));
}

INSTANTIATE_TEST_SUITE_P(Backends, QueueSemantics, ::testing::Values("mem", "sqlite"));

TEST(QueueOpen, NamedMemQueuesAreSharedInAProcess) {
  auto a = open_queue("mem:queue-test-shared");
  auto b = open_queue("mem:queue-test-shared");
  a->send_batch(std::vector<std::string>{"x"});
  EXPECT_EQ(b->receive(1, milliseconds(0)).size(), 1u);
  auto fresh1 = open_queue("mem:");
  auto fresh2 = open_queue("mem:");
  EXPECT_NE(fresh1.get(), fresh2.get());
}

TEST(QueueOpen, UnknownSchemeAndBadParameterAreClearErrors) {
  EXPECT_THROW(open_queue("nosuch:x"), std::invalid_argument);
  EXPECT_THROW(open_queue("mem:x?visibility_ms=abc"), std::invalid_argument);
  EXPECT_THROW(open_queue("no-colon"), std::invalid_argument);
}

TEST(SqliteQueue, MessagesSurviveReopening) {
  const auto dir = testing::temp_dir("durable");
  const std::string url = "sqlite-queue:" + (dir / "q.db").string() + "?name=in&visibility_ms=50";
  {
    auto q = open_queue(url);
    q->send_batch(std::vector<std::string>{"a", "b"});
    ASSERT_EQ(q->receive(1, milliseconds(0)).size(), 1u);  // in flight when the process "dies"
  }
  auto q = open_queue(url);
  std::set<std::string> got;
  for (int i = 0; i < 200 && got.size() < 2; ++i) {
    for (auto& m : q->receive(10, milliseconds(20))) {
      got.insert(m.body);
      q->delete_batch(std::vector<std::string>{m.receipt});
    }
  }
  EXPECT_EQ(got, (std::set<std::string>{"a", "b"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
