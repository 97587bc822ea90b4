#include "reply/queue_replies.hpp"

#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include "ports/clock.hpp"
#include "ports/errors.hpp"
#include "reply/reply_codec.hpp"

namespace overhead::reply {
namespace {

// Failures printed in full; later ones are only counted (a broker that is down would otherwise
// print one line per request).
constexpr std::uint64_t kPrintedFailures = 10;

}  // namespace

QueueReplies::QueueReplies(std::shared_ptr<const ports::QueueFamily> family, std::size_t max_pending, ReplyBatching batching,
                           std::string control)
    : family_(std::move(family)),
      max_pending_(max_pending == 0 ? 1 : max_pending),
      batching_(batching),
      control_(std::move(control)),
      sender_([this] { run_sender(); }) {}

QueueReplies::~QueueReplies() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  sender_.join();
}

void QueueReplies::note(const std::string& id, const std::optional<std::string>& reply_to) {
  if (!reply_to) return;
  if (!family_->is_sibling(ports::SiblingRole::reply, *reply_to))
    throw ports::ItemError("bad_message", "reply_to \"" + *reply_to + "\" is not a reply queue of this worker's input queue");
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (pending_.insert_or_assign(id, Pending{*reply_to, false}).second) noted_order_.push_back(id);
    while (noted_order_.size() > max_pending_) {
      pending_.erase(noted_order_.front());
      noted_order_.pop_front();
    }
    if (!control_.empty()) {
      // Not urgent: it leaves with the first delta, the final reply or the window, whichever is
      // first. An empty outbox gives the sender no window to wait for: wake it to start one.
      Outbox& box = outboxes_[*reply_to];
      wake = box.bodies.empty();
      append_taken(body_for(box), id, control_);
      box.last_end = -1;
    }
  }
  if (wake) wake_.notify_one();
}

std::string& QueueReplies::body_for(Outbox& box) {
  if (box.bodies.empty() || box.bodies.back().size() >= batching_.max_bytes) {
    if (!box.bodies.empty()) box.urgent = true;  // a full message waits for no window
    box.bodies.emplace_back();
    box.replies.push_back(0);
    box.last_end = -1;
  }
  if (box.oldest_ns == 0) box.oldest_ns = ports::monotonic_ns();
  return box.bodies.back();
}

void QueueReplies::text(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text) {
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    const auto it = pending_.find(std::string(id));
    if (it == pending_.end()) return;  // not a gateway's request
    ++counts_.deltas;
    Outbox& box = outboxes_[it->second.queue];
    const bool first = !it->second.streamed;
    it->second.streamed = true;
    // An empty outbox gives the sender no window to wait for (it may sleep until woken): wake it
    // to start one. At most one wake per window, not one per token.
    wake = box.bodies.empty();
    std::string& body = body_for(box);
    if (box.last_end == offset && box.last_id == id && box.last_attempt == attempt) {
      extend_last_delta(body, text);
    } else {
      append_delta(body, id, attempt, offset, text);
      box.last_id.assign(id);
      box.last_attempt.assign(attempt);
    }
    box.last_end = offset + static_cast<std::int64_t>(text.size());
    // The first piece of an answer goes at once: batching must not delay the first token.
    if (first && !box.urgent) box.urgent = wake = true;
  }
  if (wake) wake_.notify_one();
}

void QueueReplies::deliver(Reply reply) {
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(reply.id);
    if (it == pending_.end()) return;  // not a gateway's request, or answered already
    Outbox& box = outboxes_[it->second.queue];
    const bool streamed = it->second.streamed;
    pending_.erase(it);
    // noted_order_ keeps the id until the bound pushes it out; erasing a missing id then is harmless.
    append_reply(body_for(box), reply, !streamed);
    box.last_end = -1;
    ++box.replies.back();
    box.urgent = true;
  }
  wake_.notify_one();
}

void QueueReplies::flush() {
  std::unique_lock lock(mutex_);
  // The next round to start sees every event handed in before this call (one already under way
  // may have missed the latest).
  const std::uint64_t target = rounds_started_ + 1;
  flush_asked_ = true;
  wake_.notify_one();
  flushed_.wait(lock, [&] { return rounds_finished_ >= target || stop_; });
}

void QueueReplies::run_sender() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // The earliest time an outbox's window ends; urgent ones, a flush or the stop: now.
    bool now = stop_ || flush_asked_;
    std::int64_t due = 0;
    for (const auto& [name, box] : outboxes_) {
      if (box.bodies.empty()) continue;
      if (box.urgent) now = true;
      const std::int64_t end = box.oldest_ns + std::chrono::nanoseconds(batching_.window).count();
      if (due == 0 || end < due) due = end;
    }
    if (!now && due != 0 && ports::monotonic_ns() >= due) now = true;
    if (now) {
      const bool stopping = stop_;
      flush_asked_ = false;
      const std::uint64_t round = ++rounds_started_;
      send_out(lock);
      rounds_finished_ = round;
      flushed_.notify_all();
      if (stopping) return;
      continue;
    }
    if (due == 0) {
      wake_.wait(lock);
    } else {
      wake_.wait_for(lock, std::chrono::nanoseconds(due - ports::monotonic_ns()));
    }
  }
}

// Sends every outbox that is due (all of them: one whose window has not ended yet rides along,
// which only makes it earlier). Called with the lock held; sends without it.
void QueueReplies::send_out(std::unique_lock<std::mutex>& lock) {
  struct Out {
    std::string queue;
    std::deque<std::string> bodies;
    std::deque<std::uint64_t> replies;
  };
  std::vector<Out> out;
  for (auto& [name, box] : outboxes_) {
    if (box.bodies.empty()) continue;
    out.push_back(Out{name, std::move(box.bodies), std::move(box.replies)});
    box = Outbox{};
  }
  lock.unlock();
  for (auto& o : out) {
    std::shared_ptr<ports::Queue> queue;
    try {
      queue = queue_for(o.queue);
    } catch (const std::exception& e) {
      count_failure(o.queue, e.what());
      continue;
    }
    // One broker call per body; at most kMaxQueueBatch bodies per call would also do, but bodies
    // are rarely more than one per window.
    for (std::size_t i = 0; i < o.bodies.size(); ++i) {
      const std::string& body = o.bodies[i];
      try {
        const auto outcome = queue->send_batch(std::span<const std::string>(&body, 1));
        if (outcome.empty() || !outcome[0].ok()) {
          count_failure(o.queue, outcome.empty() ? std::string("no outcome") : outcome[0].failure->message);
          continue;
        }
        std::lock_guard count_lock(mutex_);
        ++counts_.messages;
        counts_.sent += o.replies[i];
      } catch (const std::exception& e) {
        count_failure(o.queue, e.what());
      }
    }
  }
  lock.lock();
}

std::shared_ptr<ports::Queue> QueueReplies::queue_for(const std::string& name) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = queues_.find(name); it != queues_.end()) return it->second;
  }
  // Opened outside the lock: connecting can take a while, and events for other queues need not
  // wait for it. Only the sender thread opens queues.
  auto queue = family_->open(name);
  std::lock_guard lock(mutex_);
  return queues_.try_emplace(name, std::move(queue)).first->second;
}

void QueueReplies::count_failure(const std::string& name, const std::string& why) {
  std::uint64_t n = 0;
  {
    std::lock_guard lock(mutex_);
    n = ++counts_.failed;
  }
  if (n <= kPrintedFailures)
    std::fprintf(stderr, "reply to queue %s not sent (%s)%s\n", name.c_str(), why.c_str(),
                 n == kPrintedFailures ? "; later failures are only counted" : "");
}

QueueReplies::Counts QueueReplies::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace overhead::reply
