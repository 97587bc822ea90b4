#include "serve/key_spend.hpp"

namespace overhead::serve {

namespace {
std::int64_t spend_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

KeySpend::KeySpend(std::shared_ptr<ports::KeyStore> store, std::chrono::milliseconds refresh, std::function<bool()> active,
                   std::function<std::int64_t()> now)
    : store_(std::move(store)),
      refresh_(refresh.count() > 0 ? refresh : std::chrono::milliseconds(2000)),
      active_(std::move(active)),
      now_(now ? std::move(now) : spend_clock_ms) {
  if (!store_) return;
  (void)refresh_now();
  thread_ = std::thread([this] { loop(); });
}

KeySpend::~KeySpend() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void KeySpend::add(const std::string& key, double usd) {
  if (key.empty() || !(usd > 0)) return;
  const std::int64_t now = now_();
  std::lock_guard lock(mutex_);
  auto& q = pending_[key];
  q.push_back({now, usd});
  // Bounded without a store to prune it: what is older than the lag is folded into the total.
  if (!store_) {
    while (!q.empty() && q.front().at_ms < now - kStoreLag.count()) {
      stored_[key] += q.front().usd;
      q.pop_front();
    }
  }
}

double KeySpend::spent(const std::string& key) {
  std::lock_guard lock(mutex_);
  double total = 0;
  if (const auto it = stored_.find(key); it != stored_.end()) total += it->second;
  if (const auto it = pending_.find(key); it != pending_.end())
    for (const auto& p : it->second) total += p.usd;
  return total;
}

bool KeySpend::refresh_now() {
  if (!store_) return true;
  if (active_ && !active_()) return true;
  const std::int64_t started = now_();
  try {
    auto stored = store_->spend_by_key();
    std::lock_guard lock(mutex_);
    stored_ = std::move(stored);
    // Answers older than the lag before this read began are in what was read.
    for (auto it = pending_.begin(); it != pending_.end();) {
      auto& q = it->second;
      while (!q.empty() && q.front().at_ms < started - kStoreLag.count()) q.pop_front();
      it = q.empty() ? pending_.erase(it) : std::next(it);
    }
    return true;
  } catch (const std::exception&) {
    std::lock_guard lock(mutex_);
    ++failures_;
    return false;
  }
}

std::uint64_t KeySpend::refresh_failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

void KeySpend::loop() {
  std::unique_lock lock(mutex_);
  while (!stop_cv_.wait_for(lock, refresh_, [&] { return stopping_; })) {
    lock.unlock();
    (void)refresh_now();
    lock.lock();
  }
}

}  // namespace overhead::serve
