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

}  // namespace overhead::ports
