// QueuePoller: one thread that reads a queue of messages that are worth nothing once handed over
// (the gateway's reply queue, a worker's control queue): receive a batch, hand each message to
// `handle`, delete the batch. A message whose lines cannot be read is dropped (it would fail the
// same way every time) and counted, the first ones printed; a receive that fails (the broker
// restarting) is counted, printed the first times, and retried after a pause. A failed delete lets
// the batch come back, which the handlers take as a repeat (a second answer to a request is
// dropped by the box, a second cancel cancels nothing more).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "ports/queue.hpp"

namespace overhead::reply {

struct QueuePollerOptions {
  // How long a receive waits for a message: a receive returns as soon as one arrives (Redis
  // blocking reads, SQS long polling); the wait only bounds how long stop() takes and sets the
  // idle cost (one broker call per wait).
  std::chrono::milliseconds receive_wait{200};
  std::chrono::milliseconds retry_pause{200};  // after a failed receive, before the next
  std::uint64_t failures_printed = 10;         // of each kind
  std::string receive_failure;                 // "receiving replies": printed as "<it> from <url> failed (...)"
  std::string unreadable;                      // "unreadable reply": printed as "<it>: <error>"
};

class QueuePoller {
 public:
  // Reads one message; returns what could not be read in it (one error per unreadable line).
  using Handle = std::function<std::vector<std::string>(ports::Message& message)>;
  // Starts the thread.
  QueuePoller(std::shared_ptr<ports::Queue> queue, QueuePollerOptions options, Handle handle);
  ~QueuePoller();
  QueuePoller(const QueuePoller&) = delete;
  QueuePoller& operator=(const QueuePoller&) = delete;

  // Ends the thread (after its current receive wait). Idempotent.
  void stop();
  [[nodiscard]] const ports::Queue& queue() const { return *queue_; }
  [[nodiscard]] std::uint64_t unreadable() const { return unreadable_.load(); }
  [[nodiscard]] std::uint64_t failures() const { return failures_.load(); }  // receives and deletes

 private:
  void run();

  std::shared_ptr<ports::Queue> queue_;
  const QueuePollerOptions options_;
  Handle handle_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> unreadable_{0}, failures_{0};
  std::thread thread_;
};

}  // namespace overhead::reply
