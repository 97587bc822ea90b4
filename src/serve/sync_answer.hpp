// SyncAnswer: one synchronous chat completion answered from the ReplyBox with no thread of its own.
// The handler queues the request, hands its Responder to a SyncAnswer and returns; the box calls
// the answer's watcher when the request ends (done or failed), the deadline thread at
// --request-timeout, the connection's event loop when the client goes, the box again at a
// shutdown. Whichever comes first writes the one answer; the request is then forgotten.
//
// So a client waiting for its answer holds no handler thread (a pool of 8 threads no longer caps
// a gateway at 8 waiting clients, and hundreds of kept-alive clients cost no thread each), and the
// answer goes from the thread that delivered the reply straight to the connection's event loop,
// without waking a handler thread in between.
//
// Work is serialised as in StreamPump: a counter of wake-ups; the thread that raises it from zero
// does the work and loops until no wake-up came meanwhile, the others return at once.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "serve/api_error.hpp"
#include "serve/http/exchange.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

class DeadlineTimers;

struct SyncAnswerHooks {
  std::function<ApiError(const reply::Reply&)> refusal;      // the error of a worker's refusal
  std::function<ApiError()> no_answer;                       // no answer in time, or a shutdown
  std::function<void()> abandoned;                           // the client went or the deadline passed: cancel the generation
  std::function<http::Response(const RequestSnapshot&)> answer;  // the 200 answer of a done request
};

class SyncAnswer final : public std::enable_shared_from_this<SyncAnswer> {
 public:
  // Answers `id` from `box` to `responder`'s client once the request ends, or at `deadline`.
  // The answer lives as long as the box watches it (the request is forgotten when it answered).
  static void start(ReplyBox& box, DeadlineTimers& timers, std::string id, std::shared_ptr<http::Responder> responder,
                    std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks);

  SyncAnswer(ReplyBox& box, std::string id, std::shared_ptr<http::Responder> responder,
             std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks);

  // A wake-up: something may have changed. Any thread; never blocks on another wake-up's work.
  void wake();

 private:
  void work();  // one wake-up's work, serialised
  void answer_error(const ApiError& e, bool abandon);
  void end(bool abandon);  // abandon: the generation is no longer wanted

  ReplyBox& box_;
  const std::string id_;
  std::shared_ptr<http::Responder> responder_;
  const std::chrono::steady_clock::time_point deadline_;
  SyncAnswerHooks hooks_;
  std::shared_ptr<const std::function<void()>> on_deadline_;  // the timers hold it weakly

  std::atomic<int> wakes_{0};
  std::atomic<bool> client_gone_{false};
  bool ended_ = false;  // only inside work()
};

}  // namespace overhead::serve
