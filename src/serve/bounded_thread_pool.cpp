#include "serve/bounded_thread_pool.hpp"

namespace overhead::serve {

BoundedThreadPool::BoundedThreadPool(std::size_t threads, std::size_t max_queued)
    : max_queued_(max_queued == 0 ? 1 : max_queued) {
  if (threads == 0) threads = 1;
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

BoundedThreadPool::~BoundedThreadPool() { shutdown(); }

void BoundedThreadPool::enqueue(std::function<void()> fn) {
  {
    std::unique_lock lock(mutex_);
    if (tasks_.size() >= max_queued_) {
      ++waits_;
      has_room_.wait(lock, [&] { return tasks_.size() < max_queued_ || shutting_down_; });
    }
    tasks_.push_back(std::move(fn));
  }
  has_task_.notify_one();
}

bool BoundedThreadPool::try_enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_ || tasks_.size() >= max_queued_) return false;
    tasks_.push_back(std::move(fn));
  }
  has_task_.notify_one();
  return true;
}

void BoundedThreadPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (shutting_down_ && threads_.empty()) return;
    shutting_down_ = true;
  }
  has_task_.notify_all();
  has_room_.notify_all();
  for (auto& t : threads_) t.join();
  std::lock_guard lock(mutex_);
  threads_.clear();
}

void BoundedThreadPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      has_task_.wait(lock, [&] { return !tasks_.empty() || shutting_down_; });
      if (tasks_.empty()) return;  // shutting down with nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    has_room_.notify_one();
    task();
  }
}

std::size_t BoundedThreadPool::queued() const {
  std::lock_guard lock(mutex_);
  return tasks_.size();
}

std::uint64_t BoundedThreadPool::waits() const {
  std::lock_guard lock(mutex_);
  return waits_;
}

}  // namespace overhead::serve
