#include "serve/sync_answer.hpp"

namespace overhead::serve {

void SyncAnswer::start(ReplyBox& box, DeadlineTimers& timers, std::string id, std::shared_ptr<http::Responder> responder,
                       std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks) {
  attach(std::make_shared<SyncAnswer>(box, std::move(id), std::move(responder), deadline, std::move(hooks)), timers);
}

SyncAnswer::SyncAnswer(ReplyBox& box, std::string id, std::shared_ptr<http::Responder> responder,
                       std::chrono::steady_clock::time_point deadline, SyncAnswerHooks hooks)
    : BoxReader(box, std::move(id), std::move(responder), deadline), hooks_(std::move(hooks)) {}

void SyncAnswer::work() {
  if (ended_) return;
  if (client_gone()) return end(true);
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

void SyncAnswer::fail() noexcept {
  if (ended_) return;
  try {
    return answer_error(answer_failed_error(), true);
  } catch (...) {
  }
  try {
    end(true);  // no answer could be written: the Responder, once dropped, answers 500 itself
  } catch (...) {
  }
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
