// The gateway's handler pool: a fixed number of threads running route handlers, and at most
// `max_queued` tasks waiting for one, so requests read ahead of the handlers hold bounded memory.
// The event loop offers a request with try_enqueue and answers 503 when there is no place (it must
// never block); enqueue waits for a place instead, for callers that may block. Requests past the
// in-flight limit are a separate matter: they get 429 (ServerOptions::max_inflight).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace overhead::serve {

class BoundedThreadPool final {
 public:
  BoundedThreadPool(std::size_t threads, std::size_t max_queued);
  ~BoundedThreadPool();
  BoundedThreadPool(const BoundedThreadPool&) = delete;
  BoundedThreadPool& operator=(const BoundedThreadPool&) = delete;

  // Waits while `max_queued` tasks are already waiting for a thread.
  void enqueue(std::function<void()> fn);
  // Queues `fn` unless `max_queued` tasks already wait (or the pool is shut down); never blocks.
  [[nodiscard]] bool try_enqueue(std::function<void()> fn);
  // Runs what is queued, then joins the threads. Idempotent.
  void shutdown();
  [[nodiscard]] std::size_t max_queued() const { return max_queued_; }

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
