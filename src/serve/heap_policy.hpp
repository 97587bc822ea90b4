// Gives freed heap memory back to the system at an interval, for a long-running gateway.
//
// Why: glibc returns free pages to the system only from the top of an arena, and the gateway
// allocates on many threads. After a burst (say the log queue's backlog of records, drained once
// the store caught up) the memory stays resident: in one measurement a gateway sat at 143 MiB
// after a load, and a single malloc_trim(0) took it to 69 MiB. Calling it at an interval gives
// such memory back within seconds, for the cost of a short pass over the arenas (each locked in
// turn). What bounds the memory under steady load is the admission limits (chat_routes.hpp), not
// this.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace overhead::serve {

class PeriodicMemoryTrim {
 public:
  // interval <= 0: does nothing.
  explicit PeriodicMemoryTrim(std::chrono::milliseconds interval);
  ~PeriodicMemoryTrim();
  PeriodicMemoryTrim(const PeriodicMemoryTrim&) = delete;
  PeriodicMemoryTrim& operator=(const PeriodicMemoryTrim&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace overhead::serve
