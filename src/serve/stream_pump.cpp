#include "serve/stream_pump.hpp"

namespace overhead::serve {

void StreamPump::start(ReplyBox& box, DeadlineTimers& timers, std::string id, CompletionStream stream,
                       std::shared_ptr<http::Responder> responder, std::chrono::steady_clock::time_point deadline,
                       StreamPumpHooks hooks) {
  attach(std::make_shared<StreamPump>(box, std::move(id), std::move(stream), std::move(responder), deadline, std::move(hooks)),
         timers);
}

StreamPump::StreamPump(ReplyBox& box, std::string id, CompletionStream stream, std::shared_ptr<http::Responder> responder,
                       std::chrono::steady_clock::time_point deadline, StreamPumpHooks hooks)
    : BoxReader(box, std::move(id), std::move(responder), deadline), stream_(std::move(stream)), hooks_(std::move(hooks)) {}

void StreamPump::work() {
  if (phase_ == Phase::ended) return;
  if (client_gone()) return end(true);
  if (phase_ == Phase::closing) {
    if (flush()) close();
    return;
  }
  if (phase_ == Phase::streaming && !flush()) return;  // the client's queue is still full
  const bool late = std::chrono::steady_clock::now() >= deadline_;
  const auto p = box_.poll_stream(id_, have_);

  if (phase_ == Phase::awaiting_first) {
    if (!p) {
      if (late) {
        answer_error(hooks_.no_answer());
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
    out_ = stream_.start();
  }

  if (!p) {
    if (late) return end_stream(CompletionStream::error({504, "No further answer from the worker in time", "server_error", "", "timeout"}), true);
    (void)flush();
    return;
  }
  if (p->closed) return end_stream(CompletionStream::error(hooks_.no_answer()), false);
  if (p->restarted) return end_stream(CompletionStream::error(stream_interrupted_error()), true);
  if (p->finished && p->finished->state == RequestState::failed)
    return end_stream(CompletionStream::error(hooks_.refusal(*p->finished->reply)), true);
  stream_.append_text(out_, p->text);
  have_ += p->text.size();
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
