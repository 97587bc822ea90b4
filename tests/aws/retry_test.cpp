// Backoff: full jitter within [0, min(cap, base * 2^n)], throttling from its own larger base.
#include <gtest/gtest.h>

#include <set>

#include "aws/retry.hpp"

namespace overhead::aws {
namespace {

TEST(Backoff, JitteredWithinTheCappedExponentialCeiling) {
  RetryPolicy p;
  p.base = std::chrono::milliseconds(10);
  p.throttle_base = std::chrono::milliseconds(100);
  p.cap = std::chrono::milliseconds(1000);
  Backoff b(p, 42);
  for (int retry = 0; retry < 12; ++retry) {
    std::set<long> seen;
    for (int i = 0; i < 200; ++i) {
      const long plain = b.delay(retry, false).count();
      const long throttled = b.delay(retry, true).count();
      EXPECT_GE(plain, 0);
      EXPECT_LE(plain, std::min(1000L, 10L << retry));
      EXPECT_LE(throttled, std::min(1000L, 100L << retry));
      seen.insert(plain);
    }
    if (retry >= 2) {
      EXPECT_GT(seen.size(), 5u) << "no jitter at retry " << retry;
    }
  }
}

TEST(Backoff, LateRetriesReachTheCap) {
  RetryPolicy p;
  p.base = std::chrono::milliseconds(10);
  p.cap = std::chrono::milliseconds(300);
  Backoff b(p, 7);
  long longest = 0;
  for (int i = 0; i < 500; ++i) longest = std::max(longest, static_cast<long>(b.delay(20, false).count()));
  EXPECT_GT(longest, 250);
  EXPECT_LE(longest, 300);
}

}  // namespace
}  // namespace overhead::aws
