#include "serve/stream_pump.hpp"

#include <algorithm>
#include <string>

#include "serve/deadline_timers.hpp"

namespace overhead::serve {

void StreamPump::start(ReplyBox& box, const std::shared_ptr<DeadlineTimers>& timers, std::string id, CompletionStream stream,
                       std::shared_ptr<http::Responder> responder, StreamDeadlines deadlines, StreamPumpHooks hooks) {
  auto pump = std::make_shared<StreamPump>(box, std::move(id), std::move(stream), std::move(responder), deadlines, std::move(hooks));
  pump->timers_ = timers;
  const std::weak_ptr<BoxReader> weak = pump;
  pump->on_timer_ = std::make_shared<const std::function<void()>>([weak] {
    if (const auto r = weak.lock()) r->wake();
  });
  attach(pump, *timers);  // wakes the pump once, which arms its timer
}

StreamPump::StreamPump(ReplyBox& box, std::string id, CompletionStream stream, std::shared_ptr<http::Responder> responder,
                       StreamDeadlines deadlines, StreamPumpHooks hooks)
    : BoxReader(box, std::move(id), std::move(responder), deadlines.total),
      stream_(std::move(stream)),
      deadlines_(deadlines),
      hooks_(std::move(hooks)) {}

void StreamPump::work() {
  step();
  arm_timer();
}

void StreamPump::arm_timer() {
  if (phase_ != Phase::awaiting_first && phase_ != Phase::streaming) return;
  const auto next = std::min(deadline_, phase_ == Phase::awaiting_first ? deadlines_.first_token : last_text_ + deadlines_.idle);
  const auto now = std::chrono::steady_clock::now();
  // A pending timer before `next` wakes the pump first, which then arms the next one; so at most
  // one entry waits per pump, however much text arrives.
  if (armed_ > now && armed_ <= next) return;
  const auto timers = timers_.lock();
  if (!timers || !on_timer_) return;
  armed_ = next;
  timers->at(next, on_timer_);
}

std::optional<ApiError> StreamPump::timed_out(std::chrono::steady_clock::time_point now) const {
  const auto ms = [](auto d) { return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()); };
  if (now >= deadline_)
    return ApiError{504, "The stream did not end within its whole-stream bound (--stream-timeout)", "server_error", "", "timeout"};
  if (phase_ == Phase::awaiting_first && now >= deadlines_.first_token)
    return ApiError{504, "No first token from the worker in time (--first-token-timeout)", "server_error", "", "timeout"};
  if (phase_ == Phase::streaming && now >= last_text_ + deadlines_.idle)
    return ApiError{504, "No further text from the worker within " + ms(deadlines_.idle) + " ms (--stream-idle-timeout)",
                    "server_error", "", "timeout"};
  return std::nullopt;
}

void StreamPump::step() {
  if (phase_ == Phase::ended) return;
  if (client_gone()) return end(true);
  if (phase_ == Phase::closing) {
    if (flush()) close();
    return;
  }
  if (phase_ == Phase::streaming && !flush()) return;  // the client's queue is still full
  const auto now = std::chrono::steady_clock::now();
  const auto p = box_.poll_stream(id_, have_);

  if (phase_ == Phase::awaiting_first) {
    if (!p) {
      if (const auto late = timed_out(now)) {
        answer_error(*late);
        end(true);
      }
      return;
    }
    if (p->closed || (p->finished && p->finished->state == RequestState::failed)) {
      answer_error(p->closed ? hooks_.no_answer() : hooks_.refusal(*p->finished->reply));
      end(false);
      return;
    }
    http::Response head;
    head.set_header("Content-Type", "text/event-stream");
    head.set_header("Cache-Control", "no-cache");
    out_stream_ = responder_->stream(std::move(head));
    if (!out_stream_) return end(true);  // the client went first
    const std::weak_ptr<BoxReader> weak = weak_from_this();
    out_stream_->on_writable([weak] {
      if (const auto s = weak.lock()) s->wake();
    });
    phase_ = Phase::streaming;
    last_text_ = now;
    out_ = stream_.start();
  }

  if (!p) {
    if (const auto late = timed_out(now)) return end_stream(CompletionStream::error(*late), true);
    (void)flush();
    return;
  }
  if (p->closed) return end_stream(CompletionStream::error(hooks_.no_answer()), false);
  // Interrupted: nothing the answer's parser holds back (a call not yet complete) is flushed; the
  // stream ends with the error alone.
  if (p->restarted) return end_stream(CompletionStream::error(stream_interrupted_error()), true);
  if (p->finished && p->finished->state == RequestState::failed)
    return end_stream(CompletionStream::error(hooks_.refusal(*p->finished->reply)), true);
  stream_.append_text(out_, p->text);
  have_ += p->text.size();
  if (!p->text.empty()) last_text_ = now;
  if (p->finished) {
    done_ = p->finished;
    return end_stream(stream_.finish(*p->finished->reply), false);
  }
  (void)flush();
}

void StreamPump::fail() noexcept {
  if (phase_ == Phase::ended) return;
  try {
    if (!out_stream_) {
      answer_error(answer_failed_error());
      return end(true);
    }
    if (phase_ == Phase::streaming) return end_stream(CompletionStream::error(answer_failed_error()), true);
  } catch (...) {
  }
  // Closing, or the error event could not be written: the stream ends without it.
  try {
    if (out_stream_) out_stream_->close();
    end(true);
  } catch (...) {
  }
}

void StreamPump::answer_error(const ApiError& e) {
  http::Response res;
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
  (void)responder_->send(std::move(res));  // false: the client has gone
}

bool StreamPump::flush() {
  if (out_.empty()) return true;
  switch (out_stream_->push(std::move(out_))) {
    case http::PushResult::queued:
      out_.clear();  // moved from: empty, made so
      return true;
    case http::PushResult::full:
      return false;  // on_writable wakes the pump
    case http::PushResult::closed:
      mark_client_gone();
      end(true);
      return false;
  }
  return false;
}

void StreamPump::end_stream(std::string last_events, bool abandon) {
  out_ += last_events;
  abandon_ = abandon;
  phase_ = Phase::closing;
  if (flush()) close();
}

void StreamPump::close() {
  out_stream_->close();
  if (done_ && hooks_.done) hooks_.done(*done_);
  end(abandon_);
}

void StreamPump::end(bool abandon) {
  if (phase_ == Phase::ended) return;
  phase_ = Phase::ended;
  if (abandon && hooks_.abandoned) hooks_.abandoned();
  box_.forget(id_);  // drops the box's hold on this pump
}

}  // namespace overhead::serve
