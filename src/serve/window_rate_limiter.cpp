#include "serve/window_rate_limiter.hpp"


namespace overhead::serve {

using std::chrono::milliseconds;

namespace {
std::int64_t steady_ms() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

WindowRateLimiter::WindowRateLimiter(milliseconds window, std::function<std::int64_t()> now)
    : window_(window.count() > 0 ? window : std::chrono::seconds(60)), now_(now ? std::move(now) : steady_ms) {}

WindowRateLimiter::Counters& WindowRateLimiter::roll(const std::string& key, std::int64_t index) {
  if (index > swept_index_ + 1) {
    // Keys idle for two windows hold nothing that still counts.
    std::erase_if(keys_, [&](const auto& kv) { return kv.second.index < index - 1; });
    swept_index_ = index;
  }
  Counters& c = keys_[key];
  if (c.index != index) {
    const bool adjacent = c.index == index - 1;
    c.requests = {adjacent ? c.requests.current : 0, 0};
    c.tokens = {adjacent ? c.tokens.current : 0, 0};
    c.index = index;
  }
  return c;
}

ports::LimitDecision WindowRateLimiter::admit(const ports::LimitAsk& per_minute) {
  if (per_minute.rpm <= 0 && per_minute.tpm <= 0) return {};
  ports::LimitAsk ask = per_minute;
  ask.rpm = ports::per_window(ask.rpm, window_);
  ask.tpm = ports::per_window(ask.tpm, window_);
  const std::int64_t now = now_();
  const std::int64_t index = now / window_.count();
  const milliseconds elapsed(now - index * window_.count());
  std::lock_guard lock(mutex_);
  Counters& c = roll(ask.key, index);
  const bool admitted = ports::requests_fit(c.requests, ask, elapsed, window_) && ports::tokens_fit(c.tokens, ask, elapsed, window_);
  if (admitted) {
    c.requests.current += 1;
    c.tokens.current += ask.tokens;
  }
  return ports::window_decision(admitted, ask, c.requests, c.tokens, elapsed, window_);
}

void WindowRateLimiter::charge(const std::string& key, std::int64_t tokens) {
  if (tokens <= 0) return;
  const std::int64_t now = now_();
  std::lock_guard lock(mutex_);
  roll(key, now / window_.count()).tokens.current += tokens;
}

}  // namespace overhead::serve
