#include "serve/deadline_timers.hpp"

#include <algorithm>

namespace overhead::serve {

DeadlineTimers::DeadlineTimers() : state_(std::make_shared<State>()), thread_([s = state_] { run(s); }) {}

DeadlineTimers::~DeadlineTimers() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stop = true;
    state_->entries = {};
  }
  state_->wake.notify_all();
  if (thread_.get_id() == std::this_thread::get_id())
    thread_.detach();  // inside one of its calls: it ends when that call returns
  else
    thread_.join();
}

void DeadlineTimers::at(Clock::time_point when, std::weak_ptr<const std::function<void()>> fn) {
  bool earliest = false;
  {
    std::lock_guard lock(state_->mutex);
    earliest = state_->entries.empty() || when < state_->entries.top().when;
    state_->entries.push({when, std::move(fn)});
    if (state_->entries.size() >= state_->purge_at) state_->purge();
  }
  if (earliest) state_->wake.notify_all();
}

void DeadlineTimers::State::purge() {
  // Most owners end long before their deadline: their entries go here rather than hold memory
  // until then. Amortised: the next purge waits until the heap doubled again.
  std::vector<Entry> live;
  live.reserve(entries.size());
  while (!entries.empty()) {
    if (!entries.top().fn.expired()) live.push_back(entries.top());
    entries.pop();
  }
  entries = decltype(entries)(std::greater<>{}, std::move(live));
  purge_at = std::max<std::size_t>(kFirstPurge, entries.size() * 2);
}

void DeadlineTimers::run(const std::shared_ptr<State>& state) {
  std::unique_lock lock(state->mutex);
  while (!state->stop) {
    if (state->entries.empty()) {
      state->wake.wait(lock);
      continue;
    }
    // A copy: wait_until reads its time point again after waking, and an at() while the lock is
    // released may grow the heap and free the storage top() refers to.
    if (const Clock::time_point next = state->entries.top().when; Clock::now() < next) {
      state->wake.wait_until(lock, next);
      continue;
    }
    auto fn = state->entries.top().fn.lock();
    state->entries.pop();
    if (!fn) continue;
    lock.unlock();
    (*fn)();
    fn.reset();  // may end the owner (and this object): before the lock is taken again
    lock.lock();
  }
}

}  // namespace overhead::serve
