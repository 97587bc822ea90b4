// DeadlineTimers: one thread that calls each registered function at its deadline, for readers that
// hold no thread of their own (a streamed answer's --request-timeout). A function whose owner is
// gone by then is skipped: it is held as a weak_ptr.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace overhead::serve {

class DeadlineTimers {
 public:
  using Clock = std::chrono::steady_clock;
  DeadlineTimers();
  // Drops what is still waiting (uncalled) and ends the thread (joined; detached when the last
  // owner lets go inside one of the thread's own calls).
  ~DeadlineTimers();
  DeadlineTimers(const DeadlineTimers&) = delete;
  DeadlineTimers& operator=(const DeadlineTimers&) = delete;

  // Calls *fn (if it still lives) on the timers' thread at `when`. Thread-safe.
  void at(Clock::time_point when, std::weak_ptr<const std::function<void()>> fn);

 private:
  struct Entry {
    Clock::time_point when;
    std::weak_ptr<const std::function<void()>> fn;
    bool operator>(const Entry& o) const { return when > o.when; }
  };
  // Shared with the thread, so that it may outlive this object when detached.
  struct State {
    std::mutex mutex;
    std::condition_variable wake;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> entries;
    bool stop = false;
    std::size_t purge_at = kFirstPurge;
    void purge();  // with mutex held: drops the entries whose owner is gone
  };
  static void run(const std::shared_ptr<State>& state);
  static constexpr std::size_t kFirstPurge = 4096;

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace overhead::serve
