// The queue contract: the semantics every Queue backend keeps (ports/queue.hpp), as one
// parametrised GoogleTest suite, QueueSemantics. A backend's test binary includes this header
// once and instantiates the suite with its own QueueBackend values:
//
//   #include "queue_contract.hpp"
//   INSTANTIATE_TEST_SUITE_P(Redis, QueueSemantics,
//       ::testing::Values(overhead::pipe::contract::url_queue_backend(
//           "redis", [](int n, const std::string& params) { return base + "?stream=t" + std::to_string(n) + "&" + params; },
//           1.0)),
//       overhead::pipe::contract::QueueBackendName{});
//
// (link the CMake target overhead_contract_tests). Time: an embedded backend takes the test's
// hand-moved clock; a server has its own clock, so its value gives `real_clock_scale` > 0 and the
// suite then sleeps instead, with every visibility timeout and wait scaled by it (a backend that
// counts visibility in whole seconds uses a scale of 1 or more). A test that needs millisecond
// exactness is skipped on a real clock.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/queue.hpp"
#include "test_util.hpp"

namespace overhead::pipe::contract {

struct QueueBackend {
  std::string name;  // shown in the test names
  // A fresh, empty queue for call number `n` (distinct n = distinct queues) with the URL
  // parameters `params` ("visibility_ms=1000&max_receives=3"); `clock` is empty on a real clock.
  // `dir` is a fresh temporary folder for backends that keep files.
  std::function<std::shared_ptr<ports::Queue>(const std::filesystem::path& dir, int n, const std::string& params, ports::ClockMs clock)>
      open;
  double real_clock_scale = 0;  // 0 = the backend takes the test's clock
  // Cases the backend's server (an emulator) cannot pass through no fault of the adapter: test
  // name -> the server's gap. Such a case is skipped with that message, never passed.
  std::map<std::string, std::string> server_gaps;
};

// A backend opened by URL through backends::open_queue; `url(n, params)` builds the URL.
inline QueueBackend url_queue_backend(std::string name, std::function<std::string(int n, const std::string& params)> url,
                                      double real_clock_scale = 0) {
  return QueueBackend{std::move(name),
                      [url](const std::filesystem::path&, int n, const std::string& params, ports::ClockMs clock) {
                        return backends::open_queue(url(n, params), std::move(clock));
                      },
                      real_clock_scale,
                      {}};
}

struct QueueBackendName {
  std::string operator()(const ::testing::TestParamInfo<QueueBackend>& info) const { return info.param.name; }
};

class QueueSemantics : public ::testing::TestWithParam<QueueBackend> {
 protected:
  using milliseconds = std::chrono::milliseconds;

  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    name = name.substr(0, name.find('/'));
    if (auto gap = GetParam().server_gaps.find(name); gap != GetParam().server_gaps.end())
      GTEST_SKIP() << "server gap: " << gap->second;
    dir_ = testing::temp_dir("queue");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  bool real_clock() const { return GetParam().real_clock_scale > 0; }
  double scale() const { return real_clock() ? GetParam().real_clock_scale : 1.0; }
  // A duration of the test, scaled for a real clock.
  milliseconds t(std::int64_t ms) const { return milliseconds(static_cast<std::int64_t>(double(ms) * scale())); }
  // Moves the test's clock, or lets that much (scaled) real time pass.
  void advance(std::int64_t ms) {
    if (real_clock()) std::this_thread::sleep_for(t(ms));
    else clock_.advance(ms);
  }

  // A fresh queue of the backend under test with the given parameters (visibility_ms scaled).
  std::shared_ptr<ports::Queue> make(const std::string& params) {
    std::string scaled;
    std::size_t pos = 0;
    while (pos <= params.size()) {
      auto amp = params.find('&', pos);
      if (amp == std::string::npos) amp = params.size();
      std::string kv = params.substr(pos, amp - pos);
      if (kv.starts_with("visibility_ms=")) kv = "visibility_ms=" + std::to_string(t(std::stoll(kv.substr(14))).count());
      if (!kv.empty()) scaled += (scaled.empty() ? "" : "&") + kv;
      pos = amp + 1;
    }
    return GetParam().open(dir_, ++n_, scaled, real_clock() ? ports::ClockMs() : clock_.fn());
  }

  std::vector<std::string> bodies(int n, const std::string& prefix = "m") {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
    return out;
  }

  testing::ManualClock clock_;
  std::filesystem::path dir_;
  int n_ = 0;
};

TEST_P(QueueSemantics, BatchLimitsAreTen) {
  auto q = make("visibility_ms=1000");
  EXPECT_THROW(q->send_batch(bodies(11)), ports::QueueError);
  EXPECT_THROW(q->send_batch(std::vector<std::string>{}), ports::QueueError);
  EXPECT_EQ(q->send_batch(bodies(10)).size(), 10u);
  EXPECT_THROW(q->receive(11, milliseconds(0)), ports::QueueError);
  EXPECT_THROW(q->receive(0, milliseconds(0)), ports::QueueError);
  auto got = q->receive(10, milliseconds(0));
  ASSERT_EQ(got.size(), 10u);
  std::vector<std::string> receipts;
  for (auto& m : got) receipts.push_back(m.receipt);
  receipts.push_back(receipts.front());
  EXPECT_THROW(q->delete_batch(receipts), ports::QueueError);
}

TEST_P(QueueSemantics, ReceiveTakesAtMostMaxAndHidesWhatItTook) {
  auto q = make("visibility_ms=1000");
  (void)q->send_batch(bodies(7));
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
  const ports::QueueCounts counts = q->counts();
  EXPECT_EQ(counts.visible, 0u);
  EXPECT_EQ(counts.in_flight, 7u);
}

TEST_P(QueueSemantics, DeletedMessagesNeverComeBack) {
  auto q = make("visibility_ms=1000");
  (void)q->send_batch(bodies(3));
  auto got = q->receive(10, milliseconds(0));
  ASSERT_EQ(got.size(), 3u);
  std::vector<std::string> receipts;
  for (auto& m : got) receipts.push_back(m.receipt);
  EXPECT_TRUE(q->delete_batch(receipts).empty());
  advance(2000);  // twice the visibility timeout
  EXPECT_TRUE(q->receive(10, milliseconds(0)).empty());
  EXPECT_EQ(q->counts().in_flight, 0u);
  EXPECT_EQ(q->counts().visible, 0u);
}

TEST_P(QueueSemantics, VisibilityExpiryRedeliversWithNewReceiptAndInvalidatesTheOld) {
  auto q = make("visibility_ms=1000");
  (void)q->send_batch(bodies(1));
  if (real_clock()) GTEST_SKIP() << "needs a clock exact to the millisecond";
  auto first = q->receive(1, milliseconds(0));
  ASSERT_EQ(first.size(), 1u);
  advance(999);
  EXPECT_TRUE(q->receive(1, milliseconds(0)).empty()) << "still invisible before the timeout";
  advance(2);
  auto second = q->receive(1, milliseconds(0));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].id, first[0].id);
  EXPECT_EQ(second[0].body, first[0].body);
  EXPECT_EQ(second[0].receive_count, 2);
  EXPECT_NE(second[0].receipt, first[0].receipt);
  // The first receipt is stale: neither delete nor extend work with it.
  EXPECT_FALSE(q->change_visibility(first[0].receipt, t(5000)));
  auto failed = q->delete_batch(std::vector<std::string>{first[0].receipt});
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0], first[0].receipt);
  // The current one works.
  EXPECT_TRUE(q->delete_batch(std::vector<std::string>{second[0].receipt}).empty());
  advance(10000);
  EXPECT_TRUE(q->receive(1, milliseconds(0)).empty());
}

TEST_P(QueueSemantics, ExtendVisibilityPostponesRedelivery) {
  auto q = make("visibility_ms=1000");
  (void)q->send_batch(bodies(1));
  auto got = q->receive(1, milliseconds(0));
  ASSERT_EQ(got.size(), 1u);
  advance(800);
  EXPECT_TRUE(q->change_visibility(got[0].receipt, t(1000)));
  advance(800);  // 1600 after receive: past the original timeout, within the extension
  EXPECT_TRUE(q->receive(1, milliseconds(0)).empty());
  advance(300);
  auto again = q->receive(1, milliseconds(0));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].receive_count, 2);
}

TEST_P(QueueSemantics, ZeroVisibilityReleasesAtOnce) {
  auto q = make("visibility_ms=1000");
  (void)q->send_batch(bodies(1));
  auto got = q->receive(1, milliseconds(0));
  ASSERT_TRUE(q->change_visibility(got[0].receipt, milliseconds(0)));
  EXPECT_EQ(q->receive(1, milliseconds(0)).size(), 1u);
}

TEST_P(QueueSemantics, MovesToDeadLetterQueueAfterMaxReceives) {
  auto q = make("visibility_ms=100&max_receives=3");
  (void)q->send_batch(std::vector<std::string>{"poison", "good"});
  auto dlq = q->dead_letter_queue();
  ASSERT_NE(dlq, nullptr);
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto got = q->receive(10, milliseconds(0));
    ASSERT_EQ(got.size(), attempt == 1 ? 2u : 1u) << "attempt " << attempt;
    for (auto& m : got) {
      if (m.body == "good") (void)q->delete_batch(std::vector<std::string>{m.receipt});
      else EXPECT_EQ(m.receive_count, attempt);
    }
    advance(101);
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
  (void)q->send_batch(bodies(1));
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(q->receive(1, milliseconds(0)).size(), 1u);
    advance(101);
  }
}

TEST_P(QueueSemantics, WaitReturnsWhenAMessageArrives) {
  auto q = make("visibility_ms=1000");
  std::thread sender([&] {
    std::this_thread::sleep_for(milliseconds(30));
    (void)q->send_batch(std::vector<std::string>{"late"});
  });
  auto got = q->receive(10, milliseconds(5000));
  sender.join();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body, "late");
}

TEST_P(QueueSemantics, ConcurrentReceiversNeverShareAMessage) {
  auto q = make("visibility_ms=60000");
  const int n = 400;
  for (int i = 0; i < n; i += 10) (void)q->send_batch(bodies(10, "b" + std::to_string(i) + "-"));
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

TEST_P(QueueSemantics, AnEntryOverTheSizeLimitFailsAloneAndForGood) {
  auto q = make("visibility_ms=1000&max_message_bytes=8");
  EXPECT_EQ(q->max_message_bytes(), 8u);
  const auto out = q->send_batch(std::vector<std::string>{"small", "far too large", "ok"});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok());
  ASSERT_FALSE(out[1].ok());
  EXPECT_FALSE(out[1].failure->retryable);
  EXPECT_NE(out[1].failure->message.find("exceeds"), std::string::npos);
  EXPECT_TRUE(out[1].id.empty());
  EXPECT_TRUE(out[2].ok());
  std::set<std::string> got;
  for (auto& m : q->receive(10, milliseconds(0))) got.insert(m.body);
  EXPECT_EQ(got, (std::set<std::string>{"small", "ok"}));
  EXPECT_THROW(ports::send_all(*q, std::vector<std::string>{"far too large"}), ports::QueueError);
}

TEST_P(QueueSemantics, ABatchOverOneMebibyteIsRefusedWhole) {
  auto q = make("visibility_ms=1000&max_message_bytes=2000000");
  const std::vector<std::string> big(5, std::string(300 * 1024, 'x'));
  try {
    (void)q->send_batch(big);
    ADD_FAILURE() << "no error";
  } catch (const ports::QueueError& e) {
    EXPECT_FALSE(e.retryable());
  }
  EXPECT_EQ(q->counts().visible, 0u);
}

TEST_P(QueueSemantics, ChangeVisibilityBatchReportsStaleReceipts) {
  auto q = make("visibility_ms=1000");
  (void)q->send_batch(bodies(3));
  auto got = q->receive(10, milliseconds(0));
  ASSERT_EQ(got.size(), 3u);
  ASSERT_TRUE(q->delete_batch(std::vector<std::string>{got[2].receipt}).empty());
  const std::vector<std::string> receipts{got[0].receipt, got[1].receipt, got[2].receipt, "garbage"};
  const auto stale = q->change_visibility_batch(receipts, t(2500));
  EXPECT_EQ(stale, (std::vector<std::string>{got[2].receipt, "garbage"}));
  advance(1500);  // past the first timeout, within the extension
  EXPECT_TRUE(q->receive(10, milliseconds(0)).empty());
  advance(1500);
  EXPECT_EQ(q->receive(10, milliseconds(0)).size(), 2u);
}

// What `overhead status` shows must agree with what the queue does: waiting and in flight as
// counts() has them, dead letters counted once moved, and no dead-letter figure without a DLQ.
TEST_P(QueueSemantics, StatusShowsWaitingInFlightAndDeadLetters) {
  auto q = make("visibility_ms=100&max_receives=1");
  (void)q->send_batch(bodies(3));
  auto got = q->receive(1, milliseconds(0));
  ASSERT_EQ(got.size(), 1u);
  auto s = q->status();
  EXPECT_EQ(s.counts.visible, 2u);
  EXPECT_EQ(s.counts.in_flight, 1u);
  ASSERT_TRUE(s.dead_letters.has_value());
  EXPECT_EQ(s.dead_letters->visible + s.dead_letters->in_flight, 0u);
  if (s.oldest_age) {
    EXPECT_GE(s.oldest_age->count(), 0);
  }

  advance(101);  // the received one expires; its next receive would exceed max_receives
  auto rest = q->receive(10, milliseconds(0));
  EXPECT_EQ(rest.size(), 2u);
  s = q->status();
  EXPECT_EQ(s.counts.visible, 0u);
  EXPECT_EQ(s.counts.in_flight, 2u);
  ASSERT_TRUE(s.dead_letters.has_value());
  EXPECT_EQ(s.dead_letters->visible + s.dead_letters->in_flight, 1u);

  auto plain = make("visibility_ms=100");
  EXPECT_FALSE(plain->status().dead_letters.has_value());
}

}  // namespace overhead::pipe::contract
