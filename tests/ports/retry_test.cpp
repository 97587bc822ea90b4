// The retry rule: only retryable failures are retried, with capped exponential backoff; jitter
// shortens each wait by at most its share, never lengthens it.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ports/errors.hpp"
#include "ports/retry.hpp"

namespace overhead::pipe {
using ports::call_with_retries;
using ports::Failure;
using ports::ObjectStoreError;
using ports::QueueError;
using ports::RetryPolicy;
using ports::StoreError;
namespace {

using std::chrono::microseconds;

RetryPolicy recording(std::vector<microseconds>& sleeps, double jitter = 0) {
  RetryPolicy p;
  p.attempts = 4;
  p.first_backoff = microseconds(100);
  p.max_backoff = microseconds(250);
  p.jitter = jitter;
  p.sleep = [&sleeps](microseconds d) { sleeps.push_back(d); };
  return p;
}

TEST(Retry, TransientErrorsAreRetriedUntilTheTriesRunOut) {
  std::vector<microseconds> sleeps;
  int calls = 0, retries = 0;
  const auto o = call_with_retries(
      recording(sleeps), [&] { ++calls; throw QueueError("throttled", Failure::transient); }, [&] { ++retries; });
  EXPECT_FALSE(o.ok);
  EXPECT_FALSE(o.permanent);
  EXPECT_EQ(o.tries, 4);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(retries, 3);
  EXPECT_EQ(sleeps, (std::vector<microseconds>{microseconds(100), microseconds(200), microseconds(250)}));
  EXPECT_EQ(o.last_error, "throttled");
}

TEST(Retry, PermanentErrorsAreNotRetried) {
  std::vector<microseconds> sleeps;
  for (auto thrower : std::vector<std::function<void()>>{
           [] { throw StoreError("access denied"); },                       // typed, permanent by default
           [] { throw ObjectStoreError("no such bucket", Failure::permanent); },
           [] { throw std::invalid_argument("bad key"); }}) {
    int calls = 0;
    const auto o = call_with_retries(recording(sleeps), [&] { ++calls; thrower(); }, [] {});
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(o.permanent);
    EXPECT_EQ(calls, 1);
  }
  EXPECT_TRUE(sleeps.empty());
}

TEST(Retry, SucceedsAfterTransientFailures) {
  std::vector<microseconds> sleeps;
  int calls = 0;
  const auto o = call_with_retries(
      recording(sleeps), [&] { if (++calls < 3) throw std::runtime_error("reset by peer"); }, [] {});
  EXPECT_TRUE(o.ok);
  EXPECT_EQ(o.tries, 3);
  EXPECT_EQ(sleeps.size(), 2u);
}

TEST(Retry, JitterStaysWithinItsShareAndVaries) {
  std::vector<microseconds> sleeps;
  const RetryPolicy p = recording(sleeps, 0.5);
  std::set<std::int64_t> seen;
  for (int i = 0; i < 200; ++i) {
    const auto d = p.backoff(2).count();  // nominal 200
    EXPECT_GE(d, 100);
    EXPECT_LE(d, 200);
    seen.insert(d);
    const auto capped = p.backoff(30).count();  // nominal: capped at 250, never overflows
    EXPECT_GE(capped, 125);
    EXPECT_LE(capped, 250);
  }
  EXPECT_GT(seen.size(), 10u);
}

}  // namespace
}  // namespace overhead::pipe
