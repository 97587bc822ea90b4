// A pipe::Consumer on its own thread, the one way every command runs one beside its workers:
// `overhead run` (each case's consumer), `overhead serve` (the in-process consumer) and
// `overhead consume` (the whole process). Started at construction; drain() says no more will come
// (the consumer stops once the log queue stays empty for its idle_exit), stop() ends it after its
// round; join() waits and returns its stats.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "pipe/consumer.hpp"

namespace overhead::pipe {

class ConsumerHost {
 public:
  // A failure of the consumer (its store or queue failed for good) ends the thread: given
  // `on_failure`, it is told there and then (join() returns the stats so far); else join()
  // rethrows it. options.drain and options.stop are the host's own (drain(), stop()) unless the
  // caller gives its own (a signal's flag), which then takes their place.
  ConsumerHost(std::shared_ptr<ports::Queue> log, ports::Store& store, DeadLetterSink& dead_letters, ConsumerOptions options,
               std::function<void(const std::exception&)> on_failure = {});
  // Drains and joins.
  ~ConsumerHost();
  ConsumerHost(const ConsumerHost&) = delete;
  ConsumerHost& operator=(const ConsumerHost&) = delete;

  // No more records will come: stop once the log queue is empty (at once after construction: a
  // consumer that drains what is there and ends, as `overhead consume` does).
  void drain() { drain_ = true; }
  // Stop now, after the current round (what is held for its stamps is stored first).
  void stop() { stop_ = true; }
  // Waits until the consumer ended or `until` passed; whether it ended.
  bool wait_until(std::chrono::steady_clock::time_point until);
  // Waits for the consumer to end (after drain() or stop(), or its own idle exit) and returns its
  // stats. Rethrows its failure (without `on_failure`). Once.
  ConsumerStats join();

 private:
  std::atomic<bool> drain_{false};
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  ConsumerStats stats_;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace overhead::pipe
