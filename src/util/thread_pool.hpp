// A fixed pool of worker threads running index-range jobs: parallel_for(n, fn) calls fn(i) for
// every i in [0, n) and returns when all are done. Used for batch encoding; the tasks share
// only immutable state, so the pool needs no locks beyond its own job hand-off. A pool may be kept
// across jobs (a tokenizer keeps one, so its threads' per-thread caches stay warm between
// batches) and a job may use fewer of its threads than it has. It also owns the
// rule for how many threads a caller's count may start (threads_for, kMaxThreads): a count comes
// from outside (Python, the C API) and threads are a resource every process on the host shares.
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
  // The most threads one pool may hold. The pool runs CPU-bound work, so threads beyond the cores
  // only cost memory and the host's thread budget; a larger count is refused (std::invalid_argument)
  // rather than started, since starting it could exhaust the limit every other process shares.
  static constexpr unsigned kMaxThreads = 1024;
  // The threads worth starting for `items` jobs when a caller asks for `requested` (0 = all
  // cores): never more than the cores or the items, at least 1. Callers passing on a count they
  // were given (encode_batch) size their pool with this, so a huge count is capped, not refused.
  static unsigned threads_for(unsigned requested, std::size_t items);

  // threads == 0 means std::thread::hardware_concurrency(); more than kMaxThreads is refused.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  // Runs fn(i) for i in [0, n) on the pool and the calling thread; rethrows the first exception.
  // `threads` (0 = all of the pool) bounds how many threads take part, the caller included.
  // Not reentrant: one job at a time per pool.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn, unsigned threads = 0);
  // The same in two halves, for a caller with other work meanwhile: start() hands the job to the
  // pool's workers (up to `threads` - 1 of them; 0 = all) and returns at once; finish() has the
  // caller take what is left, waits for the rest and rethrows the first exception. `fn` must live
  // until finish() returns; finish() must be called before the next job starts.
  void start(std::size_t n, const std::function<void(std::size_t)>& fn, unsigned threads = 0);
  void finish();
  // False in a child forked after the pool started its threads: they are not in this process, so
  // a job would be left to the caller alone (start/finish still end, but nothing runs in the
  // background). The owner then makes a new pool.
  [[nodiscard]] bool threads_alive() const;

 private:
  void worker_loop(unsigned index);
  void run_items();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t job_size_ = 0;
  unsigned participants_ = 0;  // the workers with index < this take part (the caller is index 0)
  std::size_t next_index_ = 0;
  std::size_t generation_ = 0;
  std::size_t active_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  int owner_pid_;  // the process whose threads these are
};

}  // namespace overhead::util
