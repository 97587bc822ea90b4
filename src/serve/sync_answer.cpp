#include "serve/sync_answer.hpp"

#include "serve/deadline_timers.hpp"

namespace overhead::serve {

void SyncAnswer::start(ReplyBox& box, DeadlineTimers& timers, std::string id, std::shared_ptr<http::Responder> responder,
                       std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks) {
  auto answer = std::make_shared<SyncAnswer>(box, id, std::move(responder), deadline, std::move(hooks));
  const std::weak_ptr<SyncAnswer> weak = answer;
  answer->on_deadline_ = std::make_shared<const std::function<void()>>([weak] {
    if (const auto a = weak.lock()) a->wake();
  });
  timers.at(deadline, answer->on_deadline_);
  answer->responder_->on_cancel([weak] {
    if (const auto a = weak.lock()) {
      a->client_gone_.store(true, std::memory_order_release);
      a->wake();
    }
  });
  // The box holds the answer from here until the request is forgotten (the answer's end).
  box.watch(id, [answer] { answer->wake(); });
}

SyncAnswer::SyncAnswer(ReplyBox& box, std::string id, std::shared_ptr<http::Responder> responder,
                       std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks)
    : box_(box), id_(std::move(id)), responder_(std::move(responder)), deadline_(deadline), hooks_(std::move(hooks)) {}

void SyncAnswer::wake() {
  if (wakes_.fetch_add(1, std::memory_order_acq_rel) != 0) return;  // the thread at work will look again
  for (;;) {
    int seen = wakes_.load(std::memory_order_acquire);
    work();
    if (wakes_.compare_exchange_strong(seen, 0, std::memory_order_acq_rel)) return;
  }
}

void SyncAnswer::work() {
  if (ended_) return;
  if (client_gone_.load(std::memory_order_acquire)) return end(true);
  const auto s = box_.find(id_);
  if (!s) return answer_error(hooks_.no_answer(), false);  // forgotten or evicted: nothing will come
  if (s->state == RequestState::done) {
    (void)responder_->send(hooks_.answer(*s));  // false: the client has gone
    return end(false);
  }
  if (s->state == RequestState::failed) {
    // The box's own answer timeout: no worker answered, so the generation (if any) is not wanted.
    return answer_error(hooks_.refusal(*s->reply), s->reply->error_kind == kTimeoutKind);
  }
  if (box_.cancelled()) return answer_error(hooks_.no_answer(), false);  // a shutdown: the request may still finish
  if (std::chrono::steady_clock::now() >= deadline_) return answer_error(hooks_.no_answer(), true);
}

void SyncAnswer::answer_error(const ApiError& e, bool abandon) {
  http::Response res;
  res.status = e.status;
  res.set_content(error_body(e), "application/json");
  (void)responder_->send(std::move(res));  // false: the client has gone
  end(abandon);
}

void SyncAnswer::end(bool abandon) {
  if (ended_) return;
  ended_ = true;
  if (abandon && hooks_.abandoned) hooks_.abandoned();
  box_.forget(id_);  // drops the box's hold on this answer
}

}  // namespace overhead::serve
