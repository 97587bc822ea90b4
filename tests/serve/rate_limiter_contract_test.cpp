// The rate limiter's contract (ports/rate_limiter.hpp), a TEST_P over every backend: the
// in-process counters and the Redis script (the redis fixture's server). Windows are long (10 min)
// so that a burst never straddles a window's boundary in practice; the sliding arithmetic itself
// is checked with a test clock below, where time can be moved.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "backends/redis_rate_limiter.hpp"
#include "pipe/contract/service_env.hpp"
#include "ports/rate_limiter.hpp"
#include "serve/window_rate_limiter.hpp"

namespace overhead {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kLongWindow{600000};

struct LimiterCase {
  std::string name;
  std::function<std::shared_ptr<ports::RateLimiter>()> make;
};

class RateLimiterContract : public ::testing::TestWithParam<LimiterCase> {
 protected:
  void SetUp() override { limiter_ = GetParam().make(); }
  // A key no earlier run used (the Redis server outlives a run).
  static std::string key(const std::string& what) { return test_services::unique_name("k" + what); }
  std::shared_ptr<ports::RateLimiter> limiter_;
};

// 5 per minute over a 10-minute window: 50 per window.
TEST_P(RateLimiterContract, ABurstGetsExactlyTheWindowsRequests) {
  const std::string k = key("burst");
  int admitted = 0;
  ports::LimitDecision last;
  for (int i = 0; i < 70; ++i) {
    last = limiter_->admit({k, 5, 0, 0});
    if (last.admitted) {
      ++admitted;
      EXPECT_EQ(last.remaining_requests, 50 - admitted);
    } else {
      EXPECT_EQ(last.refused_by, "requests");
      EXPECT_GT(last.retry_after.count(), 0);
    }
    EXPECT_EQ(last.remaining_tokens, -1);  // no token limit
  }
  EXPECT_EQ(admitted, 50);
  EXPECT_EQ(last.remaining_requests, 0);
  EXPECT_GT(last.reset_requests.count(), 0);
  EXPECT_LE(last.reset_requests, 2 * kLongWindow);
}

TEST_P(RateLimiterContract, RequestsAndTokensAreCountedBothOrNeither) {
  const std::string k = key("both");
  // 100 tokens per minute: 1000 per window; 10 requests per minute: 100 per window.
  auto d = limiter_->admit({k, 10, 100, 600});
  ASSERT_TRUE(d.admitted);
  EXPECT_EQ(d.remaining_tokens, 400);
  EXPECT_EQ(d.remaining_requests, 99);
  d = limiter_->admit({k, 10, 100, 500});  // 600 + 500 > 1000: refused by tokens
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.refused_by, "tokens");
  EXPECT_EQ(d.remaining_requests, 99) << "a refused request is not counted";
  d = limiter_->admit({k, 10, 100, 400});  // exactly fills the window
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.remaining_tokens, 0);
  EXPECT_EQ(d.remaining_requests, 98);
}

TEST_P(RateLimiterContract, ChargedTokensCountAgainstTheNextAdmission) {
  const std::string k = key("charge");
  ASSERT_TRUE(limiter_->admit({k, 0, 100, 100}).admitted);
  limiter_->charge(k, 850);  // completion tokens, after the answer
  auto d = limiter_->admit({k, 0, 100, 100});
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.remaining_tokens, 50);
  EXPECT_TRUE(limiter_->admit({k, 0, 100, 50}).admitted);
}

TEST_P(RateLimiterContract, KeysAreCountedApart) {
  const std::string a = key("a"), b = key("b");
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(limiter_->admit({a, 1, 0, 0}).admitted);
  EXPECT_FALSE(limiter_->admit({a, 1, 0, 0}).admitted);
  EXPECT_TRUE(limiter_->admit({b, 1, 0, 0}).admitted);
}

TEST_P(RateLimiterContract, ARequestLargerThanTheLimitNeverFits) {
  const auto d = limiter_->admit({key("large"), 0, 10, 101});  // 100 tokens per window
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.refused_by, "tokens");
  EXPECT_EQ(d.retry_after, 2 * kLongWindow);
}

TEST_P(RateLimiterContract, NoLimitsAdmitsWithoutCounting) {
  const auto d = limiter_->admit({key("none"), 0, 0, 1000000});
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.remaining_requests, -1);
  EXPECT_EQ(d.remaining_tokens, -1);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, RateLimiterContract,
    ::testing::Values(LimiterCase{"in_process", [] { return std::make_shared<serve::WindowRateLimiter>(kLongWindow); }},
                      LimiterCase{"redis",
                                  [] {
                                    return backends::open_rate_limiter(
                                        test_services::service_env("OVERHEAD_REDIS_ENV", "REDIS_URL") + "/contract:", kLongWindow);
                                  }}),
    [](const auto& param_info) { return param_info.param.name; });

// The sliding window over time, on a test clock (the in-process limiter; the Redis script mirrors
// the same arithmetic, ports/rate_limiter.cpp).
TEST(SlidingWindow, ThePreviousWindowDrainsLinearly) {
  std::int64_t now = 1'000'000;  // ms, at a window's start
  serve::WindowRateLimiter limiter(milliseconds(1000), [&] { return now; });
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(limiter.admit({"k", 6000, 0, 0}).admitted);  // 100 per 1 s window
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(limiter.admit({"k", 6000, 0, 0}).admitted);
  auto d = limiter.admit({"k", 6000, 0, 0});
  EXPECT_FALSE(d.admitted);
  EXPECT_EQ(d.retry_after, milliseconds(1010)) << "the next window, once 1% of this one has drained";
  now += 1250;  // a quarter into the next window: 100 * 0.75 = 75 still count
  d = limiter.admit({"k", 6000, 0, 0});
  EXPECT_TRUE(d.admitted);
  EXPECT_EQ(d.remaining_requests, 24);
  int more = 0;
  while (limiter.admit({"k", 6000, 0, 0}).admitted) ++more;
  EXPECT_EQ(more, 24);
  now += 2000;  // two windows idle: nothing counts
  EXPECT_EQ(limiter.admit({"k", 6000, 0, 0}).remaining_requests, 99);
}

TEST(SlidingWindow, ASteadyOfferAboveTheLimitGetsTheLimitPerWindow) {
  std::int64_t now = 0;
  serve::WindowRateLimiter limiter(milliseconds(1000), [&] { return now; });
  int admitted = 0;
  // 3x the limit (20 per second) for 100 s, one request every 1/60 s.
  for (int i = 0; i < 6000; ++i) {
    now = i * 1000 / 60;
    admitted += limiter.admit({"k", 1200, 0, 0}).admitted ? 1 : 0;
  }
  EXPECT_GE(admitted, 1980);
  EXPECT_LE(admitted, 2020);
}

TEST(SlidingWindow, PerWindowKeepsTheRate) {
  EXPECT_EQ(ports::per_window(600, milliseconds(60000)), 600);
  EXPECT_EQ(ports::per_window(600, milliseconds(1000)), 10);
  EXPECT_EQ(ports::per_window(1, milliseconds(1000)), 1) << "a set limit never rounds to none";
  EXPECT_EQ(ports::per_window(0, milliseconds(1000)), 0);
}

TEST(RedisRateLimiter, AnUnreachableServerIsAQueueErrorWithoutThePassword) {
  const std::string url = "redis://user:s3cret@127.0.0.1:" + std::to_string(test_services::closed_port()) + "/x:?connect_timeout_ms=200";
  try {
    (void)backends::open_rate_limiter(url);
    FAIL() << "opened";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overhead
