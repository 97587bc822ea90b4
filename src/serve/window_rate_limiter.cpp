#include "serve/window_rate_limiter.hpp"

#include <cmath>

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
  ports::LimitDecision d;
  if (per_minute.rpm <= 0 && per_minute.tpm <= 0) return d;
  ports::LimitAsk ask = per_minute;
  ask.rpm = ports::per_window(ask.rpm, window_);
  ask.tpm = ports::per_window(ask.tpm, window_);
  const std::int64_t now = now_();
  const std::int64_t index = now / window_.count();
  const milliseconds elapsed(now - index * window_.count());
  std::lock_guard lock(mutex_);
  Counters& c = roll(ask.key, index);
  const auto fits = [&](const ports::WindowCounts& w, std::int64_t cost, std::int64_t limit) {
    return limit <= 0 || ports::window_count(w, elapsed, window_) + static_cast<double>(cost) <= static_cast<double>(limit);
  };
  const bool requests_fit = fits(c.requests, 1, ask.rpm);
  const bool tokens_fit = fits(c.tokens, ask.tokens, ask.tpm);
  d.admitted = requests_fit && tokens_fit;
  if (d.admitted) {
    c.requests.current += 1;
    c.tokens.current += ask.tokens;
  } else {
    d.refused_by = requests_fit ? "tokens" : "requests";
    d.retry_after = requests_fit ? ports::wait_to_fit(c.tokens, ask.tokens, ask.tpm, elapsed, window_)
                                 : ports::wait_to_fit(c.requests, 1, ask.rpm, elapsed, window_);
  }
  const auto remaining = [&](const ports::WindowCounts& w, std::int64_t limit) -> std::int64_t {
    if (limit <= 0) return -1;
    return std::max<std::int64_t>(0, limit - static_cast<std::int64_t>(std::ceil(ports::window_count(w, elapsed, window_))));
  };
  d.remaining_requests = remaining(c.requests, ask.rpm);
  d.remaining_tokens = remaining(c.tokens, ask.tpm);
  d.reset_requests = ask.rpm > 0 ? ports::wait_to_drain(c.requests, elapsed, window_) : milliseconds(0);
  d.reset_tokens = ask.tpm > 0 ? ports::wait_to_drain(c.tokens, elapsed, window_) : milliseconds(0);
  return d;
}

void WindowRateLimiter::charge(const std::string& key, std::int64_t tokens) {
  if (tokens <= 0) return;
  const std::int64_t now = now_();
  std::lock_guard lock(mutex_);
  roll(key, now / window_.count()).tokens.current += tokens;
}

}  // namespace overhead::serve
