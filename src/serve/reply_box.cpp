#include "serve/reply_box.hpp"

#include <algorithm>

#include "ports/clock.hpp"

namespace overhead::serve {
namespace {

// Bounds of what one request's stream may hold back: pieces past a gap, and the text itself
// (far above any generation; a worker sending more is cut off rather than growing the gateway).
constexpr std::size_t kMaxEarlyPieces = 256;
constexpr std::size_t kMaxStreamBytes = std::size_t{64} << 20;

// What a kept finished answer holds, by the measure of max_kept_bytes: its strings that grow with
// the answer, and a fixed part for the slot, the id, the record's other fields.
constexpr std::size_t kSlotOverheadBytes = 1024;
std::size_t answer_bytes(const Reply& r) {
  return kSlotOverheadBytes + r.text.size() + r.record.text.size() + r.error_reason.size() + r.finish_reason.size();
}

}  // namespace

const char* state_name(RequestState s) {
  switch (s) {
    case RequestState::queued: return "queued";
    case RequestState::done: return "done";
    case RequestState::failed: return "failed";
  }
  return "queued";
}

void ReplyBox::open(const std::string& id, RequestInfo info, std::optional<std::chrono::milliseconds> timeout) {
  auto slot = std::make_shared<Slot>();
  slot->snapshot.info = std::move(info);
  slot->timeout = timeout.value_or(answer_timeout_);
  slot->deadline_ns = ports::monotonic_ns() + std::chrono::nanoseconds(slot->timeout).count();
  std::unique_lock lock(mutex_);
  expire_overdue();
  if (slots_.emplace(id, slot).second) {
    ++queued_;
    deadlines_.emplace(slot->deadline_ns, id);
    if (deadlines_.size() >= purge_deadlines_at_) purge_deadlines();
  }
  call_watchers(lock);
}

void ReplyBox::changed(Slot& slot) {
  if (slot.watcher) to_call_.push_back(slot.watcher);
}

void ReplyBox::call_watchers(std::unique_lock<std::mutex>& lock) {
  if (to_call_.empty() && answered_.empty()) return;
  Watchers calls;
  calls.swap(to_call_);
  std::vector<AnsweredNote> answered;
  answered.swap(answered_);
  lock.unlock();
  // The answers' charges first: a client that has its answer must find its key's spend and tokens
  // already counted when it sends the next request.
  if (answer_observer_)
    for (const auto& a : answered) answer_observer_(a);
  for (const auto& w : calls) (*w)();
}

void ReplyBox::set_answer_observer(AnswerObserver observer) {
  std::lock_guard lock(mutex_);
  answer_observer_ = std::move(observer);
}

void ReplyBox::note(const std::string& id, const std::optional<std::string>&) {
  std::lock_guard lock(mutex_);
  if (const auto it = slots_.find(id); it != slots_.end()) it->second->snapshot.taken = true;
}

void ReplyBox::expire_overdue() {
  const std::int64_t now = ports::monotonic_ns();
  while (!deadlines_.empty() && deadlines_.top().first <= now) {
    const std::string id = deadlines_.top().second;
    deadlines_.pop();
    const auto it = slots_.find(id);
    if (it == slots_.end() || it->second->snapshot.state != RequestState::queued) continue;
    finish(id, *it->second,
           Reply::refused(id, kTimeoutKind,
                          "no worker answered within " + std::to_string(it->second->timeout.count()) +
                              " ms; the request may still be processed, and its record stored"));
  }
}

void ReplyBox::purge_deadlines() {
  // Most requests are answered long before their deadline (a stream's may be many minutes away):
  // their entries go here rather than hold memory until then. Amortised: the next purge waits
  // until the heap doubled again.
  std::vector<Deadline> live;
  live.reserve(deadlines_.size());
  while (!deadlines_.empty()) {
    const auto it = slots_.find(deadlines_.top().second);
    if (it != slots_.end() && it->second->snapshot.state == RequestState::queued) live.push_back(deadlines_.top());
    deadlines_.pop();
  }
  deadlines_ = decltype(deadlines_)(std::greater<>{}, std::move(live));
  purge_deadlines_at_ = std::max<std::size_t>(kFirstDeadlinePurge, deadlines_.size() * 2);
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
  std::unique_lock lock(mutex_);
  text_locked(id, attempt, offset, piece);
  call_watchers(lock);
}

void ReplyBox::text_locked(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view piece) {
  const auto it = slots_.find(std::string(id));
  if (it == slots_.end() || it->second->snapshot.state != RequestState::queued) return;
  Slot& slot = *it->second;
  if (slot.restarted) return;
  if (slot.attempt != attempt) {
    if (!slot.text.empty() || !slot.early.empty()) {
      // Another generation of the same item: its text need not continue what was passed on.
      slot.restarted = true;
      changed(slot);
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
  changed(slot);
}

void ReplyBox::deliver(Reply reply) {
  std::unique_lock lock(mutex_);
  deliver_locked(std::move(reply));
  call_watchers(lock);
}

void ReplyBox::deliver_locked(Reply reply) {
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
  slot.snapshot.replied_ns = ports::monotonic_ns();
  slot.snapshot.reply = std::move(reply);
  if (answer_observer_ && slot.snapshot.state == RequestState::done && !slot.snapshot.info.key_name.empty()) {
    const ports::Record& r = slot.snapshot.reply->record;
    answered_.push_back({slot.snapshot.info.key_name, slot.snapshot.info.key_tpm, r.token_count, r.output_tokens, r.cost_usd});
  }
  slot.early.clear();
  slot.waiting_reply.reset();
  --queued_;
  changed(slot);
  if (slot.snapshot.info.kept) {
    // Only the reply is read from now on (GET /v1/requests/{id}): the streamed copy of its text goes.
    std::string().swap(slot.text);
    const std::size_t bytes = answer_bytes(*slot.snapshot.reply);
    finished_kept_.emplace_back(id, bytes);
    kept_bytes_ += bytes;
    evict_kept();
  }
}

void ReplyBox::evict_kept() {
  while (!finished_kept_.empty() && (finished_kept_.size() > max_kept_ || kept_bytes_ > max_kept_bytes_)) {
    auto [id, bytes] = std::move(finished_kept_.front());
    finished_kept_.pop_front();
    kept_bytes_ -= bytes;
    slots_.erase(id);
    if (evicted_.insert(id).second) evicted_order_.push_back(std::move(id));
    while (evicted_order_.size() > kMaxEvictedIds) {
      evicted_.erase(evicted_order_.front());
      evicted_order_.pop_front();
    }
  }
}

bool ReplyBox::evicted(const std::string& id) const {
  std::lock_guard lock(mutex_);
  return evicted_.contains(id);
}

StreamProgress ReplyBox::progress(const Slot& slot, std::size_t have) const {
  StreamProgress p;
  p.restarted = slot.restarted;
  if (slot.snapshot.state != RequestState::queued) {
    p.finished = slot.snapshot;
    const std::string& whole = slot.snapshot.reply->text;
    // The reader holds the first `have` bytes of the streamed text; an answer that does not begin
    // with them came from another generation.
    if (p.finished->state == RequestState::done &&
        (whole.size() < have || (have > 0 && whole.compare(0, have, slot.text, 0, have) != 0)))
      p.restarted = true;
    else if (whole.size() > have)
      p.text = whole.substr(have);
    return p;
  }
  if (slot.text.size() > have) p.text = slot.text.substr(have);
  return p;
}

std::optional<StreamProgress> ReplyBox::poll_stream(const std::string& id, std::size_t have) {
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) {
    StreamProgress gone;
    gone.closed = true;
    return gone;
  }
  StreamProgress p = progress(*it->second, have);
  if (!p.finished && p.text.empty() && !p.restarted) {
    if (!cancelled_) return std::nullopt;  // nothing new yet
    p.closed = true;
  }
  return p;
}

void ReplyBox::watch(const std::string& id, StreamWatcher watcher) {
  auto w = std::make_shared<const StreamWatcher>(std::move(watcher));
  {
    std::lock_guard lock(mutex_);
    if (const auto it = slots_.find(id); it != slots_.end()) it->second->watcher = w;
  }
  (*w)();
}

std::optional<RequestSnapshot> ReplyBox::find(const std::string& id) {
  std::unique_lock lock(mutex_);
  expire_overdue();
  std::optional<RequestSnapshot> found;
  if (const auto it = slots_.find(id); it != slots_.end()) found = it->second->snapshot;
  call_watchers(lock);
  return found;
}

void ReplyBox::forget(const std::string& id) {
  std::lock_guard lock(mutex_);
  const auto it = slots_.find(id);
  if (it == slots_.end()) return;
  if (it->second->snapshot.state == RequestState::queued) --queued_;
  slots_.erase(it);
}

void ReplyBox::cancel_all() {
  std::unique_lock lock(mutex_);
  cancelled_ = true;
  for (auto& [id, slot] : slots_) changed(*slot);
  call_watchers(lock);
}

bool ReplyBox::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

std::size_t ReplyBox::queued() {
  std::unique_lock lock(mutex_);
  expire_overdue();
  const std::size_t n = queued_;
  call_watchers(lock);
  return n;
}

}  // namespace overhead::serve
