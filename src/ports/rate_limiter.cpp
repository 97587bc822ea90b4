#include "ports/rate_limiter.hpp"

#include <algorithm>
#include <cmath>

namespace overhead::ports {

using std::chrono::milliseconds;

std::int64_t per_window(std::int64_t per_minute, milliseconds window) {
  if (per_minute <= 0) return 0;
  const double scaled = static_cast<double>(per_minute) * static_cast<double>(window.count()) / 60000.0;
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(scaled)));
}

double window_count(const WindowCounts& c, milliseconds elapsed, milliseconds window) {
  const double w = static_cast<double>(window.count());
  const double e = std::clamp(static_cast<double>(elapsed.count()), 0.0, w);
  // The previous window's share rounded down: with it unrounded, a steady offer above the limit
  // gets one request fewer than the limit per window (the share never quite reaches 0 before the
  // window ends), 5% short at 20 per window.
  return std::floor(static_cast<double>(c.previous) * (1.0 - e / w)) + static_cast<double>(c.current);
}

milliseconds wait_to_fit(const WindowCounts& c, std::int64_t cost, std::int64_t limit, milliseconds elapsed, milliseconds window) {
  const double w = static_cast<double>(window.count());
  const double e = std::clamp(static_cast<double>(elapsed.count()), 0.0, w);
  const double room = static_cast<double>(limit - cost);  // what the counted amount may be
  if (room < 0) return 2 * window;                         // larger than the limit: never fits
  if (window_count(c, elapsed, window) <= room) return milliseconds(0);
  const double prev = static_cast<double>(c.previous), cur = static_cast<double>(c.current);
  double t;
  if (cur <= room && prev > 0) {
    // Within this window: the previous window's share drains linearly.
    t = w * (1.0 - (room - cur) / prev) - e;
  } else {
    // In the next window, this window's count becomes the draining one.
    t = (w - e) + (cur > 0 ? w * (1.0 - room / cur) : 0.0);
  }
  return milliseconds(static_cast<std::int64_t>(std::ceil(std::max(t, 0.0))));
}

milliseconds wait_to_drain(const WindowCounts& c, milliseconds elapsed, milliseconds window) {
  const milliseconds e = std::clamp(elapsed, milliseconds(0), window);
  if (c.current > 0) return 2 * window - e;
  if (c.previous > 0) return window - e;
  return milliseconds(0);
}

bool requests_fit(const WindowCounts& requests, const LimitAsk& ask, milliseconds elapsed, milliseconds window) {
  return ask.rpm <= 0 || window_count(requests, elapsed, window) + 1 <= static_cast<double>(ask.rpm);
}

bool tokens_fit(const WindowCounts& tokens, const LimitAsk& ask, milliseconds elapsed, milliseconds window) {
  return ask.tpm <= 0 || window_count(tokens, elapsed, window) + static_cast<double>(ask.tokens) <= static_cast<double>(ask.tpm);
}

LimitDecision window_decision(bool admitted, const LimitAsk& ask, const WindowCounts& requests, const WindowCounts& tokens,
                              milliseconds elapsed, milliseconds window) {
  LimitDecision d;
  d.admitted = admitted;
  if (!admitted) {
    const bool by_tokens = requests_fit(requests, ask, elapsed, window);
    d.refused_by = by_tokens ? "tokens" : "requests";
    d.retry_after = by_tokens ? wait_to_fit(tokens, ask.tokens, ask.tpm, elapsed, window) : wait_to_fit(requests, 1, ask.rpm, elapsed, window);
  }
  const auto remaining = [&](const WindowCounts& w, std::int64_t limit) -> std::int64_t {
    if (limit <= 0) return -1;
    return std::max<std::int64_t>(0, limit - static_cast<std::int64_t>(std::ceil(window_count(w, elapsed, window))));
  };
  d.remaining_requests = remaining(requests, ask.rpm);
  d.remaining_tokens = remaining(tokens, ask.tpm);
  d.reset_requests = ask.rpm > 0 ? wait_to_drain(requests, elapsed, window) : milliseconds(0);
  d.reset_tokens = ask.tpm > 0 ? wait_to_drain(tokens, elapsed, window) : milliseconds(0);
  return d;
}

}  // namespace overhead::ports
