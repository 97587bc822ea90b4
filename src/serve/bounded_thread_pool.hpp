// The gateway's connection pool: httplib's accept loop hands every accepted connection to a task
// queue, and the one httplib 0.11 ships (ThreadPool) queues without limit, so a flood of
// connections beyond the threads grows memory without bound. This pool has a fixed number of
// threads and at most `max_queued` connections waiting for one; past that, enqueue (the accept
// loop) waits for a free place, so further connections wait in the kernel's listen backlog, which
// is bounded, instead of in our memory. Requests past the in-flight limit are a separate matter:
// they get 429 (ServerOptions::max_inflight).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace overhead::serve {

class BoundedThreadPool final : public httplib::TaskQueue {
 public:
  BoundedThreadPool(std::size_t threads, std::size_t max_queued);
  ~BoundedThreadPool() override;
  BoundedThreadPool(const BoundedThreadPool&) = delete;
  BoundedThreadPool& operator=(const BoundedThreadPool&) = delete;

  // Waits while `max_queued` tasks are already waiting for a thread.
  void enqueue(std::function<void()> fn) override;
  // Runs what is queued, then joins the threads. Idempotent.
  void shutdown() override;

  // For tests and /metrics: tasks waiting, and the times enqueue had to wait for a place.
  [[nodiscard]] std::size_t queued() const;
  [[nodiscard]] std::uint64_t waits() const;

 private:
  void work();

  std::size_t max_queued_;
  mutable std::mutex mutex_;
  std::condition_variable has_task_, has_room_;
  std::deque<std::function<void()>> tasks_;
  bool shutting_down_ = false;
  std::uint64_t waits_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace overhead::serve
