#include "util/thread_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace overhead::util {

namespace {
unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }
}  // namespace

unsigned ThreadPool::threads_for(unsigned requested, std::size_t items) {
  const unsigned wanted = requested == 0 ? cores() : std::min(requested, cores());
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, items)));
}

ThreadPool::ThreadPool(unsigned threads) : owner_pid_(static_cast<int>(::getpid())) {
  if (threads > kMaxThreads)
    throw std::invalid_argument("thread pool: " + std::to_string(threads) + " threads requested, at most " +
                                std::to_string(kMaxThreads));
  if (threads == 0) threads = cores();
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

// Takes indices one at a time under the lock: items are whole documents (microseconds each), so
// the hand-off cost is small against the work and the load stays balanced.
void ThreadPool::run_items() {
  std::unique_lock lock(mutex_);
  ++active_;
  while (next_index_ < job_size_) {
    const std::size_t i = next_index_++;
    const auto* job = job_;
    lock.unlock();
    try {
      (*job)(i);
    } catch (...) {
      lock.lock();
      if (!error_) error_ = std::current_exception();
      next_index_ = job_size_;  // abandon the rest of this job
      continue;
    }
    lock.lock();
  }
  --active_;
  if (next_index_ >= job_size_ && active_ == 0) done_.notify_all();
}

void ThreadPool::worker_loop(unsigned index) {
  std::size_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (index >= participants_) continue;  // this job asked for fewer threads
    }
    run_items();
  }
}

void ThreadPool::parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn, unsigned threads) {
  start(n, fn, threads);
  finish();
}

void ThreadPool::start(std::size_t n, const std::function<void(std::size_t)>& fn, unsigned threads) {
  const unsigned taking_part = threads == 0 ? size() : std::min(threads, size());
  {
    std::lock_guard lock(mutex_);
    job_ = &fn;
    job_size_ = n;
    participants_ = taking_part;
    next_index_ = 0;
    error_ = nullptr;
    // A job for the caller alone (or an empty one) wakes no worker.
    if (taking_part > 1 && n > 0) ++generation_;
  }
  if (taking_part > 1 && n > 0) wake_.notify_all();
}

void ThreadPool::finish() {
  run_items();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [&] { return next_index_ >= job_size_ && active_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

bool ThreadPool::threads_alive() const { return workers_.empty() || static_cast<int>(::getpid()) == owner_pid_; }

}  // namespace overhead::util
