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
// The wake-ups and their serialisation are BoxReader's (box_reader.hpp); the connection's
// on_writable wakes the pump too.
//
// Time bounds: a stream that receives text all along is healthy however long it lasts, so the
// first text must come by `first_token`, then no more than `idle` may pass between two pieces of text,
// and the whole stream ends by `total` (BoxReader's deadline). A stream past one of them ends with
// a timeout: a plain 504 before the head, an error event after it. One timer entry per pump is
// outstanding at a time: when it fires, the pump re-arms it at its next bound, so text arriving
// costs no timer work.
//
// Back-pressure: when the client reads slower than the text comes, the connection's queue fills
// (ResponseStream::push says `full`); the pump keeps its events and stops taking text until the
// queue drained (on_writable). The text waits in the box, which bounds it.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "serve/api_error.hpp"
#include "serve/box_reader.hpp"
#include "serve/completion_stream.hpp"
#include "serve/http/exchange.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

struct StreamDeadlines {
  std::chrono::steady_clock::time_point first_token;  // the first text by then
  std::chrono::milliseconds idle{30000};               // the longest wait for the next text after that
  std::chrono::steady_clock::time_point total;         // the whole stream by then
};

struct StreamPumpHooks {
  std::function<ApiError(const reply::Reply&)> refusal;  // the error of a worker's refusal
  std::function<ApiError()> no_answer;                   // no answer in time, or a shutdown
  std::function<void()> abandoned;                       // the client went or the deadline passed: cancel the generation
  std::function<void(const RequestSnapshot&)> done;      // the stream was written whole
};

class StreamPump final : public BoxReader {
 public:
  // Starts pumping `id` from `box` to `responder`'s client until the request ends or one of
  // `deadlines` passes. The pump holds `timers` weakly (they may go first at a shutdown).
  static void start(ReplyBox& box, const std::shared_ptr<DeadlineTimers>& timers, std::string id, CompletionStream stream,
                    std::shared_ptr<http::Responder> responder, StreamDeadlines deadlines, StreamPumpHooks hooks);

  StreamPump(ReplyBox& box, std::string id, CompletionStream stream, std::shared_ptr<http::Responder> responder,
             StreamDeadlines deadlines, StreamPumpHooks hooks);


 private:
  enum class Phase { awaiting_first, streaming, closing, ended };
  void work() override;
  void step();                 // one wake-up's work, before the timer is re-armed
  void arm_timer();            // the timer at the next bound, unless one is still pending before it
  // The bound that passed, if any: the first token's, the idle one or the total one.
  [[nodiscard]] std::optional<ApiError> timed_out(std::chrono::steady_clock::time_point now) const;
  void fail() noexcept override;
  void answer_error(const ApiError& e);  // before the head: a plain HTTP error
  // Queues the last events; once they are all accepted, closes the stream (close()).
  void end_stream(std::string last_events, bool abandon);
  bool flush();                // pushes out_; false: the client's queue is full (or the client is gone)
  void close();
  void end(bool abandon);      // abandon: the generation is no longer wanted

  CompletionStream stream_;
  const StreamDeadlines deadlines_;
  std::weak_ptr<DeadlineTimers> timers_;
  std::shared_ptr<const std::function<void()>> on_timer_;  // the timers hold it weakly
  std::shared_ptr<http::ResponseStream> out_stream_;
  StreamPumpHooks hooks_;
  // Below: only inside work().
  Phase phase_ = Phase::awaiting_first;
  std::size_t have_ = 0;  // bytes of the box's text turned into events
  std::string out_;       // events not yet accepted by the connection's queue
  bool abandon_ = false;  // closing: whether the generation is to be cancelled at the end
  std::optional<RequestSnapshot> done_;  // closing: the request finished done (its stages are recorded)
  std::chrono::steady_clock::time_point last_text_{};  // streaming: when the last text was taken
  std::chrono::steady_clock::time_point armed_{};      // when the pending timer fires (past: none pending)
};

}  // namespace overhead::serve
