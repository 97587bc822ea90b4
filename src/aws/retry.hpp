// When and how long to wait before repeating a failed AWS call: capped exponential backoff with
// full jitter (the AWS SDKs' "standard" mode): attempt n (0-based) waits a uniform random time in
// [0, min(cap, base * 2^n)]. Jitter spreads the retries of many workers that were throttled at
// the same moment, so they do not come back together.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace overhead::aws {

struct RetryPolicy {
  int max_attempts = 5;                 // first try included
  std::chrono::milliseconds base{50};
  std::chrono::milliseconds cap{5000};
  // Throttling answers wait from a larger base: the service asked us to slow down.
  std::chrono::milliseconds throttle_base{200};
};

class Backoff {
 public:
  explicit Backoff(RetryPolicy policy, std::uint64_t seed = std::random_device{}());
  // The wait before retry number `retry` (0 = first retry).
  std::chrono::milliseconds delay(int retry, bool throttled);
  const RetryPolicy& policy() const { return policy_; }

 private:
  RetryPolicy policy_;
  std::mt19937_64 rng_;
};

}  // namespace overhead::aws
