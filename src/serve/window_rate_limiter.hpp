// The in-process rate limiter (ports/rate_limiter.hpp): the sliding-window counters of one
// gateway, per key name, under one mutex. For several gateways the counters must be shared
// (backends/redis_rate_limiter.hpp); this one is the default of a single gateway.
// Memory: two windows of two counters per key that asked in the last two windows; older ones are
// dropped as they are met, so it is bounded by the keys in use.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ports/rate_limiter.hpp"

namespace overhead::serve {

class WindowRateLimiter final : public ports::RateLimiter {
 public:
  // `now` gives milliseconds on a monotonic clock (tests pass their own).
  explicit WindowRateLimiter(std::chrono::milliseconds window = std::chrono::seconds(60),
                             std::function<std::int64_t()> now = {});
  [[nodiscard]] ports::LimitDecision admit(const ports::LimitAsk& ask) override;
  void charge(const std::string& key, std::int64_t tokens) override;
  [[nodiscard]] std::chrono::milliseconds window() const override { return window_; }
  [[nodiscard]] std::string where() const override { return "in-process"; }

 private:
  struct Counters {
    std::int64_t index = 0;  // the current window's number (now / window)
    ports::WindowCounts requests, tokens;
  };
  // The key's counters rolled forward to window `index`.
  Counters& roll(const std::string& key, std::int64_t index);

  std::chrono::milliseconds window_;
  std::function<std::int64_t()> now_;
  std::mutex mutex_;
  std::unordered_map<std::string, Counters> keys_;
  std::int64_t swept_index_ = 0;
};

}  // namespace overhead::serve
