#include "pipe/consumer_host.hpp"

#include <utility>

namespace overhead::pipe {

using ports::Queue;
using ports::Store;

ConsumerHost::ConsumerHost(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead_letters, ConsumerOptions options,
                           std::function<void(const std::exception&)> on_failure) {
  thread_ = std::thread([this, log = std::move(log), &store, &dead_letters, options, on_failure = std::move(on_failure)]() mutable {
    if (!options.stop) options.stop = &stop_;
    if (!options.drain) options.drain = &drain_;
    ConsumerStats stats;
    std::exception_ptr error;
    try {
      Consumer consumer(std::move(log), store, dead_letters, options);
      stats = consumer.run();
    } catch (const std::exception& e) {
      if (on_failure)
        on_failure(e);
      else
        error = std::current_exception();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    stats_ = stats;
    error_ = error;
    done_ = true;
    done_cv_.notify_all();
  });
}

ConsumerHost::~ConsumerHost() {
  drain();
  if (thread_.joinable()) thread_.join();
}

bool ConsumerHost::wait_until(std::chrono::steady_clock::time_point until) {
  std::unique_lock lock(mutex_);
  return done_cv_.wait_until(lock, until, [&] { return done_; });
}

ConsumerStats ConsumerHost::join() {
  if (thread_.joinable()) thread_.join();
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  return stats_;
}

}  // namespace overhead::pipe
