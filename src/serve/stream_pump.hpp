// StreamPump: one streamed chat completion carried from the ReplyBox to its client with no thread
// of its own. The box calls the pump's watcher when the request's text grows or it ends; the pump
// takes what is new (ReplyBox::poll_stream), turns it into server-sent events (CompletionStream)
// and pushes them to the client's ResponseStream, which the connection writes on its event loop.
// So N streams in flight hold N pumps (a few hundred bytes each), not N handler threads.
//
// Until the worker took the request up, nothing is sent: a refusal (a template error, an unknown
// model) is still a plain HTTP error. The head goes out with the first text (or a done answer with
// none). Then, in order: the role delta, the content deltas, the finish chunk, the usage chunk when
// asked, `data: [DONE]`. A stream that cannot go on ends with an error event (completion_stream.hpp).
//
// The pump's work is serialised by a counter of wake-ups: the thread that raises it from zero does
// the work and loops until no wake-up came meanwhile; the others return at once. So a watcher
// call never blocks, whichever thread makes it (the decoder's loop, the reply receiver, the
// connection's event loop for on_writable and on_cancel, the deadline thread).
//
// Back-pressure: when the client reads slower than the text comes, the connection's queue fills
// (ResponseStream::push says `full`); the pump keeps its events and stops taking text until the
// queue drained (on_writable). The text waits in the box, which bounds it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "serve/api_error.hpp"
#include "serve/completion_stream.hpp"
#include "serve/http/exchange.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

class DeadlineTimers;

struct StreamPumpHooks {
  std::function<ApiError(const reply::Reply&)> refusal;  // the error of a worker's refusal
  std::function<ApiError()> no_answer;                   // no answer in time, or a shutdown
  std::function<void()> abandoned;                       // the client went or the deadline passed: cancel the generation
  std::function<void(const RequestSnapshot&)> done;      // the stream was written whole
};

class StreamPump final : public std::enable_shared_from_this<StreamPump> {
 public:
  // Starts pumping `id` from `box` to `responder`'s client until the request ends or `deadline`.
  // The pump lives as long as the box watches it (the request is forgotten when the pump ends).
  static void start(ReplyBox& box, DeadlineTimers& timers, std::string id, CompletionStream stream,
                    std::shared_ptr<http::Responder> responder, std::chrono::steady_clock::time_point deadline,
                    StreamPumpHooks hooks);

  StreamPump(ReplyBox& box, std::string id, CompletionStream stream, std::shared_ptr<http::Responder> responder,
             std::chrono::steady_clock::time_point deadline, StreamPumpHooks hooks);

  // A wake-up: something may have changed. Any thread; never blocks on another wake-up's work.
  void wake();

 private:
  enum class Phase { awaiting_first, streaming, closing, ended };
  void work();                 // one wake-up's work, serialised
  void answer_error(const ApiError& e);  // before the head: a plain HTTP error
  // Queues the last events; once they are all accepted, closes the stream (close()).
  void end_stream(std::string last_events, bool abandon);
  bool flush();                // pushes out_; false: the client's queue is full (or the client is gone)
  void close();
  void end(bool abandon);      // abandon: the generation is no longer wanted

  ReplyBox& box_;
  const std::string id_;
  const CompletionStream stream_;
  std::shared_ptr<http::Responder> responder_;
  std::shared_ptr<http::ResponseStream> out_stream_;
  const std::chrono::steady_clock::time_point deadline_;
  StreamPumpHooks hooks_;
  std::shared_ptr<const std::function<void()>> on_deadline_;  // the timers hold it weakly

  std::atomic<int> wakes_{0};
  std::atomic<bool> client_gone_{false};
  // Below: only inside work().
  Phase phase_ = Phase::awaiting_first;
  std::size_t have_ = 0;  // bytes of the box's text turned into events
  std::string out_;       // events not yet accepted by the connection's queue
  bool abandon_ = false;  // closing: whether the generation is to be cancelled at the end
  std::optional<RequestSnapshot> done_;  // closing: the request finished done (its stages are recorded)
};

}  // namespace overhead::serve
