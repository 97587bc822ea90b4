// The shared rate limiter on Redis (ports/rate_limiter.hpp): every gateway on one Redis counts
// into the same per-key hash, so a key's limits hold across gateways. An admission is one script
// run (EVALSHA, one round trip): it rolls the key's windows forward by the server's clock (TIME),
// checks requests and tokens together, and counts both or neither; no other admission can
// interleave. One key per API key ("PREFIX{NAME}", its hash tag keeping it in one slot), expiring
// two windows after its last use.
//
// URL: redis://[USER:PASSWORD@]HOST[:PORT][/PREFIX][?db=N&timeout_ms=MS&window_ms=MS&connect_timeout_ms=MS]
// (PREFIX defaults to "overhead:limits:"). Unreachable: the call throws ports::QueueError after
// one attempt and a reconnect (an admission must not wait out a retry schedule); the gateway's
// --limits-on-error decides.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/redis_connection.hpp"
#include "ports/rate_limiter.hpp"

namespace overhead::backends {

class RedisRateLimiter final : public ports::RateLimiter {
 public:
  RedisRateLimiter(RedisEndpoint endpoint, std::string prefix, std::chrono::milliseconds window,
                   std::chrono::milliseconds call_timeout);
  [[nodiscard]] ports::LimitDecision admit(const ports::LimitAsk& ask) override;
  void charge(const std::string& key, std::int64_t tokens) override;
  [[nodiscard]] std::chrono::milliseconds window() const override { return window_; }
  [[nodiscard]] std::string where() const override { return endpoint_.shown; }

 private:
  // Runs the script on a pooled connection; a lost connection is replaced and the call tried once
  // more (a reply lost after the server counted may count one admission twice: conservative).
  std::vector<long long> run(const std::string& key, const std::vector<std::string>& args);

  RedisEndpoint endpoint_;
  std::string prefix_;
  std::chrono::milliseconds window_;
  std::chrono::milliseconds call_timeout_;
  std::string sha_;
  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<RedisConnection>> idle_;
};

// Opens the limiter of a redis:// URL (its window: window_ms, else `default_window`); throws std::invalid_argument naming the redacted URL for a
// bad or unknown parameter, ports::QueueError when Redis cannot be reached.
[[nodiscard]] std::shared_ptr<ports::RateLimiter> open_rate_limiter(const std::string& url,
                                                                  std::chrono::milliseconds default_window = std::chrono::seconds(60));

}  // namespace overhead::backends
