#include "serve/heap_policy.hpp"

#include <malloc.h>

namespace overhead::serve {


PeriodicMemoryTrim::PeriodicMemoryTrim(std::chrono::milliseconds interval) {
  if (interval.count() <= 0) return;
  thread_ = std::thread([this, interval] {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, interval, [&] { return stop_; })) {
      lock.unlock();
      (void)malloc_trim(0);
      lock.lock();
    }
  });
}

PeriodicMemoryTrim::~PeriodicMemoryTrim() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace overhead::serve
