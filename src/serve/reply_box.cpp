#include "serve/reply_box.hpp"

#include "pipe/clock.hpp"

namespace overhead::serve {

const char* state_name(RequestState s) {
  switch (s) {
    case RequestState::queued: return "queued";
    case RequestState::done: return "done";
    case RequestState::failed: return "failed";
  }
  return "queued";
}

void ReplyBox::open(const std::string& id, RequestInfo info) {
  auto slot = std::make_shared<Slot>();
  slot->snapshot.info = std::move(info);
  std::lock_guard lock(mutex_);
  if (slots_.emplace(id, std::move(slot)).second) ++queued_;
}

void ReplyBox::deliver(Reply reply) {
  const std::int64_t now = pipe::monotonic_ns();
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(reply.id);
  if (it == slots_.end() || it->second->snapshot.state != RequestState::queued) return;
  Slot& slot = *it->second;
  slot.snapshot.state = reply.ok ? RequestState::done : RequestState::failed;
  slot.snapshot.replied_ns = now;
  const std::string id = reply.id;
  slot.snapshot.reply = std::move(reply);
  --queued_;
  slot.cv.notify_all();
  if (slot.snapshot.info.kept) {
    finished_kept_.push_back(id);
    while (finished_kept_.size() > max_kept_) {
      slots_.erase(finished_kept_.front());
      finished_kept_.pop_front();
    }
  }
}

std::optional<RequestSnapshot> ReplyBox::wait(const std::string& id, std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) return std::nullopt;
  const std::shared_ptr<Slot> slot = it->second;  // stays alive if evicted meanwhile
  const bool answered = slot->cv.wait_until(lock, deadline, [&] {
    return cancelled_ || slot->snapshot.state != RequestState::queued;
  });
  if (!answered || slot->snapshot.state == RequestState::queued) return std::nullopt;
  return slot->snapshot;
}

std::optional<RequestSnapshot> ReplyBox::find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) return std::nullopt;
  return it->second->snapshot;
}

void ReplyBox::forget(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) return;
  if (it->second->snapshot.state == RequestState::queued) --queued_;
  slots_.erase(it);
}

void ReplyBox::cancel_all() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  for (auto& [id, slot] : slots_) slot->cv.notify_all();
}

bool ReplyBox::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

std::size_t ReplyBox::queued() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

}  // namespace overhead::serve
