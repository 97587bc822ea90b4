// A fixed pool of worker threads running index-range jobs: parallel_for(n, fn) calls fn(i) for
// every i in [0, n) and returns when all are done. Used for batch encoding; the tasks share
// only immutable state, so the pool needs no locks beyond its own job hand-off.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace overhead::util {

class ThreadPool {
 public:
  // threads == 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  // Runs fn(i) for i in [0, n) on the pool and the calling thread; rethrows the first exception.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

 private:
  void worker_loop();
  void run_items();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t job_size_ = 0;
  std::size_t next_index_ = 0;
  std::size_t generation_ = 0;
  std::size_t active_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
};

}  // namespace overhead::util
