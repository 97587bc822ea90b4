// SyncAnswer: one synchronous chat completion answered from the ReplyBox with no thread of its own.
// The handler queues the request, hands its Responder to a SyncAnswer and returns; the box calls
// the answer's watcher when the request ends (done or failed), the deadline thread at
// --request-timeout, the connection's event loop when the client goes, the box again at a
// shutdown (the wake-ups and their serialisation are BoxReader's). Whichever comes first writes
// the one answer; the request is then forgotten.
//
// So a client waiting for its answer holds no handler thread (a pool of 8 threads no longer caps
// a gateway at 8 waiting clients, and hundreds of kept-alive clients cost no thread each), and the
// answer goes from the thread that delivered the reply straight to the connection's event loop,
// without waking a handler thread in between.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "serve/api_error.hpp"
#include "serve/box_reader.hpp"
#include "serve/http/exchange.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

struct SyncAnswerHooks {
  std::function<ApiError(const reply::Reply&)> refusal;      // the error of a worker's refusal
  std::function<ApiError()> no_answer;                       // no answer in time, or a shutdown
  std::function<void()> abandoned;                           // the client went or the deadline passed: cancel the generation
  std::function<http::Response(const RequestSnapshot&)> answer;  // the 200 answer of a done request
};

class SyncAnswer final : public BoxReader {
 public:
  // Answers `id` from `box` to `responder`'s client once the request ends, or at `deadline`.
  static void start(ReplyBox& box, DeadlineTimers& timers, std::string id, std::shared_ptr<http::Responder> responder,
                    std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks);

  SyncAnswer(ReplyBox& box, std::string id, std::shared_ptr<http::Responder> responder,
             std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks);

 private:
  void work() override;
  void fail() noexcept override;
  void answer_error(const ApiError& e, bool abandon);
  void end(bool abandon);  // abandon: the generation is no longer wanted

  SyncAnswerHooks hooks_;
  bool ended_ = false;  // only inside work()
};

}  // namespace overhead::serve
