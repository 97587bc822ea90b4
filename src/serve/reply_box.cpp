#include "serve/reply_box.hpp"

#include "ports/clock.hpp"

namespace overhead::serve {
namespace {

// Bounds of what one request's stream may hold back: pieces past a gap, and the text itself
// (far above any generation; a worker sending more is cut off rather than growing the gateway).
constexpr std::size_t kMaxEarlyPieces = 256;
constexpr std::size_t kMaxStreamBytes = std::size_t{64} << 20;

}  // namespace

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
  slot->deadline_ns = pipe::monotonic_ns() + std::chrono::nanoseconds(answer_timeout_).count();
  std::lock_guard lock(mutex_);
  expire_overdue();
  if (slots_.emplace(id, slot).second) {
    ++queued_;
    deadlines_.emplace_back(slot->deadline_ns, id);
  }
}

void ReplyBox::note(const std::string& id, const std::optional<std::string>&) {
  std::lock_guard lock(mutex_);
  if (const auto it = slots_.find(id); it != slots_.end()) it->second->snapshot.taken = true;
}

void ReplyBox::expire_overdue() {
  const std::int64_t now = pipe::monotonic_ns();
  // Every request has the same timeout, so deadlines come in open order.
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    const std::string id = std::move(deadlines_.front().second);
    deadlines_.pop_front();
    const auto it = slots_.find(id);
    if (it == slots_.end() || it->second->snapshot.state != RequestState::queued) continue;
    finish(id, *it->second,
           Reply::refused(id, kTimeoutKind,
                          "no worker answered within " + std::to_string(answer_timeout_.count()) +
                              " ms; the request may still be processed, and its record stored"));
  }
}

void ReplyBox::take_early(Slot& slot) {
  while (!slot.early.empty()) {
    auto first = slot.early.begin();
    const auto have = static_cast<std::int64_t>(slot.text.size());
    if (first->first > have) return;
    const std::int64_t end = first->first + static_cast<std::int64_t>(first->second.size());
    if (end > have) slot.text.append(first->second, static_cast<std::size_t>(have - first->first), std::string::npos);
    slot.early.erase(first);
  }
}

void ReplyBox::text(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view piece) {
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(std::string(id));
  if (it == slots_.end() || it->second->snapshot.state != RequestState::queued) return;
  Slot& slot = *it->second;
  if (slot.restarted) return;
  if (slot.attempt != attempt) {
    if (!slot.text.empty() || !slot.early.empty()) {
      // Another generation of the same item: its text need not continue what was passed on.
      slot.restarted = true;
      slot.cv.notify_all();
      return;
    }
    slot.attempt.assign(attempt);
  }
  const auto have = static_cast<std::int64_t>(slot.text.size());
  const std::int64_t end = offset + static_cast<std::int64_t>(piece.size());
  if (end <= have) return;  // already held: a message delivered twice
  if (offset > have) {
    if (slot.early.size() < kMaxEarlyPieces) slot.early.emplace(offset, std::string(piece));
    return;
  }
  if (slot.text.size() + piece.size() > kMaxStreamBytes) {
    slot.restarted = true;  // cut off: the reader reports an error
  } else {
    slot.text.append(piece.substr(static_cast<std::size_t>(have - offset)));
    take_early(slot);
  }
  // A done reply that waited for the last of its text completes now.
  if (slot.waiting_reply && static_cast<std::int64_t>(slot.text.size()) >= slot.waiting_reply->text_bytes) {
    Reply r = std::move(*slot.waiting_reply);
    slot.waiting_reply.reset();
    r.text = slot.text.substr(0, static_cast<std::size_t>(r.text_bytes));
    finish(it->first, slot, std::move(r));
    return;
  }
  slot.cv.notify_all();
}

void ReplyBox::deliver(Reply reply) {
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(reply.id);
  if (it == slots_.end() || it->second->snapshot.state != RequestState::queued) return;
  Slot& slot = *it->second;
  if (reply.ok() && reply.text.empty() && reply.text_bytes > 0) {
    // Streamed over a queue: the deltas carry the text. Complete once they are all here.
    if (!slot.restarted && reply.attempt == slot.attempt &&
        static_cast<std::int64_t>(slot.text.size()) < reply.text_bytes) {
      slot.waiting_reply = std::move(reply);
      return;
    }
    reply.text = slot.text.substr(0, static_cast<std::size_t>(std::min<std::int64_t>(reply.text_bytes, slot.text.size())));
  }
  finish(it->first, slot, std::move(reply));
}

void ReplyBox::finish(const std::string& id, Slot& slot, Reply reply) {
  slot.snapshot.state = reply.ok() ? RequestState::done : RequestState::failed;
  slot.snapshot.replied_ns = pipe::monotonic_ns();
  slot.snapshot.reply = std::move(reply);
  slot.early.clear();
  slot.waiting_reply.reset();
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

std::optional<StreamProgress> ReplyBox::wait_stream(const std::string& id, std::size_t have,
                                                    std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) return std::nullopt;
  const std::shared_ptr<Slot> slot = it->second;
  const auto ready = [&] {
    return cancelled_ || slot->restarted || slot->snapshot.state != RequestState::queued || slot->text.size() > have;
  };
  if (!slot->cv.wait_until(lock, deadline, ready)) return std::nullopt;
  StreamProgress p;
  p.restarted = slot->restarted;
  if (slot->snapshot.state != RequestState::queued) {
    p.finished = slot->snapshot;
    const std::string& whole = slot->snapshot.reply->text;
    // The reader holds the first `have` bytes of the streamed text; an answer that does not begin
    // with them came from another generation.
    if (p.finished->state == RequestState::done &&
        (whole.size() < have || (have > 0 && whole.compare(0, have, slot->text, 0, have) != 0)))
      p.restarted = true;
    else if (whole.size() > have)
      p.text = whole.substr(have);
    return p;
  }
  if (slot->text.size() > have) p.text = slot->text.substr(have);
  if (p.text.empty() && !p.restarted) return std::nullopt;  // cancelled
  return p;
}

std::optional<RequestSnapshot> ReplyBox::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  expire_overdue();
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

std::size_t ReplyBox::queued() {
  std::lock_guard lock(mutex_);
  expire_overdue();
  return queued_;
}

}  // namespace overhead::serve
