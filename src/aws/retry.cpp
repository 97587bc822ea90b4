#include "aws/retry.hpp"

#include <algorithm>

namespace overhead::aws {

Backoff::Backoff(RetryPolicy policy, std::uint64_t seed) : policy_(policy), rng_(seed) {}

std::chrono::milliseconds Backoff::delay(int retry, bool throttled) {
  const double base = static_cast<double>((throttled ? policy_.throttle_base : policy_.base).count());
  const double cap = static_cast<double>(policy_.cap.count());
  const double ceiling = std::min(cap, base * static_cast<double>(1ULL << std::clamp(retry, 0, 30)));
  std::uniform_real_distribution<double> jitter(0.0, ceiling);
  return std::chrono::milliseconds(static_cast<std::int64_t>(jitter(rng_)));
}

}  // namespace overhead::aws
