#include "serve/http/exchange.hpp"

namespace overhead::serve::http {

PushResult ResponseStream::push(std::string&& chunk) { return exchange_->push(std::move(chunk)); }
void ResponseStream::close() { exchange_->end_stream(false); }
void ResponseStream::abort() { exchange_->end_stream(true); }
void ResponseStream::on_cancel(std::function<void()> fn) { exchange_->on_cancel(std::move(fn)); }
void ResponseStream::on_writable(std::function<void()> fn) { exchange_->on_writable(std::move(fn)); }
bool ResponseStream::cancelled() const { return exchange_->cancelled(); }
std::size_t ResponseStream::queued_bytes() const { return exchange_->queued_bytes(); }

Responder::~Responder() {
  if (exchange_ && !exchange_->answered() && !exchange_->cancelled()) exchange_->answer(exchange_->unanswered_response());
}
bool Responder::send(Response res) { return exchange_->answer(std::move(res)); }
std::shared_ptr<ResponseStream> Responder::stream(Response head) { return exchange_->begin_stream(std::move(head)); }
void Responder::on_cancel(std::function<void()> fn) { exchange_->on_cancel(std::move(fn)); }
bool Responder::cancelled() const { return exchange_->cancelled(); }

namespace detail {

Exchange::Exchange(std::weak_ptr<ConnectionPort> connection, std::size_t max_queued_bytes, Finished finished,
                   std::function<Response()> unanswered)
    : connection_(std::move(connection)),
      max_queued_bytes_(max_queued_bytes == 0 ? 1 : max_queued_bytes),
      finished_(std::move(finished)),
      unanswered_(std::move(unanswered)) {}

Exchange::~Exchange() {
  // Nothing wrote an answer and nothing saw the client go (the connection was torn down with the
  // server): the request still counts as finished, once.
  if (!finished_called_ && finished_) finished_(499);
}

std::shared_ptr<ConnectionPort> Exchange::leave_pending(Phase next) {
  bool gone = false;
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::pending) return nullptr;
    phase_ = next;
    gone = cancelled_;
  }
  if (!gone) {
    if (auto c = connection_.lock()) return c;
  }
  finish(499);
  return nullptr;
}

bool Exchange::answer(Response res) {
  const auto c = leave_pending(Phase::answered);
  if (!c) return false;
  c->post_answer(shared_from_this(), std::move(res));
  return true;
}

std::shared_ptr<ResponseStream> Exchange::begin_stream(Response head) {
  const auto c = leave_pending(Phase::streaming);
  if (!c) return nullptr;
  c->post_stream_head(shared_from_this(), std::move(head));
  return std::make_shared<ResponseStream>(shared_from_this());
}

PushResult Exchange::push(std::string&& chunk) {
  bool post = false;
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::streaming || cancelled_) return PushResult::closed;
    if (chunk.empty()) return PushResult::queued;
    if (queued_bytes_ >= max_queued_bytes_) {
      want_writable_ = true;
      return PushResult::full;
    }
    queued_bytes_ += chunk.size();
    queue_.push_back(std::move(chunk));
    post = !pump_posted_;
    pump_posted_ = true;
  }
  if (post)
    if (const auto c = connection_.lock()) c->post_pump(shared_from_this());
  return PushResult::queued;
}

void Exchange::end_stream(bool cut) {
  bool post = false;
  bool gone = false;
  {
    std::lock_guard lock(mutex_);
    if (phase_ != Phase::streaming) return;
    phase_ = Phase::ended;
    cut_ = cut;
    gone = cancelled_;
    post = !pump_posted_;
    pump_posted_ = true;
  }
  if (gone) return;  // cancel() has finished it
  if (post) {
    if (const auto c = connection_.lock()) {
      c->post_pump(shared_from_this());
      return;
    }
    finish(499);
  }
}

void Exchange::on_cancel(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (!cancelled_) {
      cancel_callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Exchange::on_writable(std::function<void()> fn) {
  std::lock_guard lock(mutex_);
  writable_callback_ = std::move(fn);
}

bool Exchange::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

bool Exchange::answered() const {
  std::lock_guard lock(mutex_);
  return phase_ != Phase::pending;
}

std::size_t Exchange::queued_bytes() const {
  std::lock_guard lock(mutex_);
  return queued_bytes_;
}

Exchange::Taken Exchange::take() {
  Taken t;
  std::function<void()> writable;
  {
    std::lock_guard lock(mutex_);
    t.chunks.assign(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    queued_bytes_ = 0;
    pump_posted_ = false;
    t.end = phase_ == Phase::ended;
    t.cut = cut_;
    if (want_writable_) {
      want_writable_ = false;
      writable = writable_callback_;
    }
  }
  if (writable) writable();
  return t;
}

void Exchange::cancel() {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard lock(mutex_);
    if (cancelled_ || finished_called_) return;  // gone after its answer was written: nothing to cancel
    cancelled_ = true;
    queue_.clear();
    queued_bytes_ = 0;
    callbacks.swap(cancel_callbacks_);
  }
  for (auto& fn : callbacks) fn();
  finish(499);
}

void Exchange::finish(int status) {
  Finished f;
  {
    std::lock_guard lock(mutex_);
    if (finished_called_) return;
    finished_called_ = true;
    f = std::move(finished_);
  }
  if (f) f(status);
}

}  // namespace detail
}  // namespace overhead::serve::http
