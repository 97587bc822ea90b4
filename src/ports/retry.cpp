#include "ports/retry.hpp"

#include <algorithm>
#include <random>
#include <thread>

namespace overhead::ports {

std::chrono::microseconds RetryPolicy::backoff(int attempt) const {
  auto d = first_backoff;
  for (int i = 1; i < attempt && d < max_backoff; ++i) d *= 2;
  d = std::min(d, max_backoff);
  if (jitter > 0) {
    thread_local std::minstd_rand rng(std::random_device{}());
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    d = std::chrono::microseconds(static_cast<std::int64_t>(double(d.count()) * (1.0 - std::min(jitter, 1.0) * u)));
  }
  return d;
}

void RetryPolicy::wait(int attempt) const {
  const auto d = backoff(attempt);
  if (sleep) sleep(d);
  else std::this_thread::sleep_for(d);
}

}  // namespace overhead::ports
