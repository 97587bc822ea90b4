// Retrying a backend call: only failures that a retry can help (is_retryable, errors.hpp), with
// capped exponential backoff and jitter. Shared by the log publisher and the consumer, so both
// stop at the first permanent error (bad credentials, a missing table) instead of hammering it.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>

#include "ports/errors.hpp"

namespace overhead::ports {

struct RetryPolicy {
  int attempts = 5;  // tries in all, the first included
  std::chrono::microseconds first_backoff{1000};
  std::chrono::microseconds max_backoff{200000};
  // The share of each wait drawn at random: wait = backoff * (1 - jitter * u), u uniform in
  // [0, 1). Many clients throttled together (one hot table) then come back spread out instead of
  // in lockstep. 0 = the exact schedule first, 2 x first, ... capped at max_backoff.
  double jitter = 0;
  // How to wait between tries; tests replace it to record the backoff instead of sleeping.
  std::function<void(std::chrono::microseconds)> sleep;

  // The defaults with jitter: what the pipeline uses against a backend.
  [[nodiscard]] static RetryPolicy jittered(double share = 0.5) {
    RetryPolicy p;
    p.jitter = share;
    return p;
  }

  // The wait after failed try number `attempt` (1-based), jitter applied.
  [[nodiscard]] std::chrono::microseconds backoff(int attempt) const;
  void wait(int attempt) const;
};

struct RetryOutcome {
  bool ok = false;
  int tries = 0;
  bool permanent = false;  // stopped at an error that a retry cannot help
  std::string last_error;
};

// Calls fn() until it returns. A retryable failure is retried after policy.wait(attempt) while
// tries remain (on_retry() is called before each retry); a permanent one is not. Anything not a
// std::exception (a deliberate crash in tests) propagates.
template <class Fn, class OnRetry>
[[nodiscard]] RetryOutcome call_with_retries(const RetryPolicy& policy, Fn&& fn, OnRetry&& on_retry) {
  RetryOutcome out;
  for (int attempt = 1;; ++attempt) {
    out.tries = attempt;
    try {
      fn();
      out.ok = true;
      return out;
    } catch (const std::exception& e) {
      out.last_error = e.what();
      if (!is_retryable(e)) {
        out.permanent = true;
        return out;
      }
    }
    if (attempt >= policy.attempts) return out;
    on_retry();
    policy.wait(attempt);
  }
}

}  // namespace overhead::ports
