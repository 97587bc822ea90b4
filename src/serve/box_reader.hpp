// BoxReader: what a reader of one request in the ReplyBox shares when it holds no thread of its own
// (a synchronous answer, sync_answer.hpp; a stream's pump, stream_pump.hpp). Three things wake it:
// the box, after each change of its request (and at a shutdown); the deadline thread, at
// --request-timeout; the client's connection, when the client goes. Each wake-up calls work(),
// serialised by a counter of wake-ups: the thread that raises it from zero does the work and loops
// until no wake-up came meanwhile; the others return at once. So a wake-up never blocks, whichever
// thread makes it (the decoder's loop, the reply receiver, the connection's event loop, the
// deadline thread). The box holds the reader from attach() until the reader forgets its request.
// A work() that throws does not end the serialisation nor leave the request unanswered: the
// reader's fail() answers it (a 500, or an error event in a stream already begun) and ends it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "serve/http/exchange.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

class DeadlineTimers;

class BoxReader : public std::enable_shared_from_this<BoxReader> {
 public:
  virtual ~BoxReader() = default;
  BoxReader(const BoxReader&) = delete;
  BoxReader& operator=(const BoxReader&) = delete;

  // A wake-up: something may have changed. Any thread; never blocks on another wake-up's work.
  void wake();

 protected:
  BoxReader(ReplyBox& box, std::string id, std::shared_ptr<http::Responder> responder,
            std::chrono::steady_clock::time_point deadline);
  // Registers the three wakers (the deadline, the client's cancel, the box's watcher, which wakes
  // the reader once at once). Called once, by the subclass's start().
  static void attach(const std::shared_ptr<BoxReader>& reader, DeadlineTimers& timers);
  // One wake-up's work, serialised.
  virtual void work() = 0;
  // work() threw: answer the request with an error (if it is not answered yet) and forget it.
  // Serialised as work() is. Must not throw.
  virtual void fail() noexcept = 0;
  [[nodiscard]] bool client_gone() const { return client_gone_.load(std::memory_order_acquire); }
  void mark_client_gone() { client_gone_.store(true, std::memory_order_release); }

  ReplyBox& box_;
  const std::string id_;
  std::shared_ptr<http::Responder> responder_;
  const std::chrono::steady_clock::time_point deadline_;

 private:
  void work_or_fail() noexcept;

  std::shared_ptr<const std::function<void()>> on_deadline_;  // the timers hold it weakly
  std::atomic<int> wakes_{0};
  std::atomic<bool> client_gone_{false};
};

}  // namespace overhead::serve
