// Per-key request and token limits (a port): one admission asks for one request and its prompt
// tokens against a key's requests-per-minute and tokens-per-minute, and gets a yes or no with what
// is left and when the window frees up (OpenAI's x-ratelimit-* headers). Completion tokens are
// charged after the answer, when they are known.
//
// The algorithm every backend keeps: a sliding-window counter. Time is cut into windows of
// `window` (60 s for "per minute"); the count seen at time t is
//     floor(previous_window_count * (1 - elapsed_in_current / window)) + current_window_count,
// and a request is admitted when count + its cost stays within the limit, for requests and tokens
// both, and then both are counted (an admission either counts both or neither). At a steady offer
// above the limit it admits the limit per window; a fixed window would admit up to twice that
// across a boundary, and a log of every request costs memory per request.
//
// Backends: in-process (serve/window_rate_limiter.hpp, one gateway) and Redis
// (backends/redis_rate_limiter.hpp: one script per admission, one round trip, counters shared by
// every gateway on that Redis; the window follows Redis's clock, so gateways need not agree on
// theirs). A backend that cannot answer throws ports::QueueError; what the gateway then does
// (admit or refuse) is its --limits-on-error.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace overhead::ports {

// A per-minute limit as a per-window one: the same rate (at least 1 when the limit is set). With
// the default 60 s window they are equal; a shorter window (tests, bursty fleets) holds the rate
// over shorter spans and allows a smaller burst.
[[nodiscard]] std::int64_t per_window(std::int64_t per_minute, std::chrono::milliseconds window);

struct LimitAsk {
  std::string key;          // the key's name (never its secret)
  std::int64_t rpm = 0;     // per minute; 0: no request limit
  std::int64_t tpm = 0;     // per minute; 0: no token limit
  std::int64_t tokens = 0;  // this request's prompt tokens, counted against tpm
};

struct LimitDecision {
  bool admitted = true;
  // Which limit refused: "requests" or "tokens"; empty when admitted.
  std::string refused_by;
  // After this admission (or, refused, as things stand): what is left in the window (in the
  // window's units, per_window), and how long
  // until the used part of the window has drained (the x-ratelimit-reset-* headers). -1: no limit.
  std::int64_t remaining_requests = -1;
  std::int64_t remaining_tokens = -1;
  std::chrono::milliseconds reset_requests{0};
  std::chrono::milliseconds reset_tokens{0};
  // Refused: how long until this request would fit (Retry-After).
  std::chrono::milliseconds retry_after{0};
};

class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  [[nodiscard]] virtual LimitDecision admit(const LimitAsk& ask) = 0;
  // Adds `tokens` to the key's token count of the current window (completion tokens, known after
  // the answer). Never refuses; a key then over its limit waits for the window to drain.
  virtual void charge(const std::string& key, std::int64_t tokens) = 0;
  [[nodiscard]] virtual std::chrono::milliseconds window() const = 0;
  // Where the counters live, for messages ("in-process", or the redacted Redis URL).
  [[nodiscard]] virtual std::string where() const = 0;
};

// The sliding-window arithmetic both backends follow (the Redis script mirrors it): the counted
// amount at `elapsed` into the current window, and the decision for `cost` against `limit`.
struct WindowCounts {
  std::int64_t previous = 0;
  std::int64_t current = 0;
};
[[nodiscard]] double window_count(const WindowCounts& c, std::chrono::milliseconds elapsed, std::chrono::milliseconds window);
// How long until a count of `c` has drained enough for `cost` more to fit under `limit` (0 when
// it fits now); and until it has drained entirely (the reset header).
[[nodiscard]] std::chrono::milliseconds wait_to_fit(const WindowCounts& c, std::int64_t cost, std::int64_t limit,
                                                    std::chrono::milliseconds elapsed, std::chrono::milliseconds window);
[[nodiscard]] std::chrono::milliseconds wait_to_drain(const WindowCounts& c, std::chrono::milliseconds elapsed,
                                                      std::chrono::milliseconds window);
// Whether one request of `ask` (limits per window, per_window) fits the counts as they stand.
[[nodiscard]] bool requests_fit(const WindowCounts& requests, const LimitAsk& ask, std::chrono::milliseconds elapsed,
                                std::chrono::milliseconds window);
[[nodiscard]] bool tokens_fit(const WindowCounts& tokens, const LimitAsk& ask, std::chrono::milliseconds elapsed,
                              std::chrono::milliseconds window);
// The decision every backend reports once it has admitted (and counted) or refused `ask` (limits
// per window): which limit refused, how long until it would fit, what is left, and the resets,
// from the counts as they stand after the admission.
[[nodiscard]] LimitDecision window_decision(bool admitted, const LimitAsk& ask, const WindowCounts& requests,
                                            const WindowCounts& tokens, std::chrono::milliseconds elapsed,
                                            std::chrono::milliseconds window);

}  // namespace overhead::ports
