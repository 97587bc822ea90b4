#include "backends/mem_queue.hpp"

#include <charconv>
#include <map>
#include <mutex>

#include "ports/errors.hpp"
#include "backends/receipt.hpp"

namespace overhead::backends {


using ports::BackendUrl;
using ports::check_send_batch;
using ports::ClockMs;
using ports::kDefaultMaxMessageBytes;
using ports::kMaxMessageBytesBound;
using ports::kMaxQueueBatch;
using ports::kMaxReceivesBound;
using ports::kMaxVisibilityMs;
using ports::Message;
using ports::Queue;
using ports::QueueCounts;
using ports::QueueError;
using ports::send_all;
using ports::SendOutcome;
using ports::wall_ms;

MemQueue::MemQueue(std::string url, std::chrono::milliseconds visibility, int max_receives,
                   std::shared_ptr<Queue> dead_letters, ClockMs clock, std::size_t max_message_bytes)
    : url_(std::move(url)), visibility_(visibility), max_receives_(max_receives), max_message_bytes_(max_message_bytes),
      dead_letters_(std::move(dead_letters)), clock_(clock ? std::move(clock) : ClockMs(&wall_ms)) {}

std::vector<SendOutcome> MemQueue::send_batch(std::span<const std::string> bodies) {
  auto checks = check_send_batch(bodies, max_message_bytes_, url_);
  std::vector<SendOutcome> out(bodies.size());
  {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (checks[i]) {
        out[i].failure = std::move(checks[i]);
        continue;
      }
      const std::uint64_t seq = next_seq_++;
      entries_.emplace(seq, Entry{bodies[i], 0, 0, 0, false});
      visible_.push_back(seq);
      out[i].id = std::to_string(seq);
    }
  }
  arrived_.notify_all();
  return out;
}

void MemQueue::expire_locked(std::int64_t now) {
  while (!timers_.empty() && timers_.top().at <= now) {
    const Timer t = timers_.top();
    timers_.pop();
    auto it = entries_.find(t.seq);
    // A timer is stale when the message was deleted, received again or had its visibility changed.
    if (it == entries_.end() || !it->second.in_flight || it->second.nonce != t.nonce || it->second.visible_at != t.at) continue;
    it->second.in_flight = false;
    --in_flight_;
    visible_.push_back(t.seq);
  }
}

std::vector<Message> MemQueue::receive(std::size_t max, std::chrono::milliseconds wait) {
  if (max == 0 || max > kMaxQueueBatch)
    throw QueueError(url_ + ": receive takes 1 to 10 messages, asked " + std::to_string(max));
  std::vector<Message> out;
  std::vector<std::string> to_dead_letter;
  const auto deadline = std::chrono::steady_clock::now() + wait;
  {
    std::unique_lock lock(mutex_);
    for (;;) {
      const std::int64_t now = clock_();
      expire_locked(now);
      while (!visible_.empty() && out.size() < max) {
        const std::uint64_t seq = visible_.front();
        visible_.pop_front();
        auto it = entries_.find(seq);
        if (it == entries_.end() || it->second.in_flight) continue;  // deleted, or a duplicate slot
        Entry& e = it->second;
        if (max_receives_ > 0 && e.receive_count >= max_receives_) {
          to_dead_letter.push_back(std::move(e.body));
          entries_.erase(it);
          continue;
        }
        e.in_flight = true;
        ++in_flight_;
        e.receive_count += 1;
        e.nonce = next_nonce_++;
        e.visible_at = now + visibility_.count();
        timers_.push(Timer{e.visible_at, seq, e.nonce});
        out.push_back(Message{std::to_string(seq), std::to_string(seq) + ":" + std::to_string(e.nonce), e.body, e.receive_count});
      }
      if (!out.empty() || !to_dead_letter.empty() || wait.count() <= 0) break;
      // Wake on a send, or in time for the earliest visibility expiry, or at the deadline.
      auto until = deadline;
      if (!timers_.empty()) {
        const auto expiry = std::chrono::steady_clock::now() + std::chrono::milliseconds(timers_.top().at - now);
        if (expiry < until) until = expiry;
      }
      if (arrived_.wait_until(lock, until) == std::cv_status::timeout && std::chrono::steady_clock::now() >= deadline) {
        expire_locked(clock_());
        if (visible_.empty()) break;
      }
    }
  }
  // Outside the lock: the dead-letter queue has its own.
  if (!to_dead_letter.empty()) send_all(*dead_letters_, to_dead_letter);
  if (out.empty() && !to_dead_letter.empty() && wait.count() > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return receive(max, left.count() > 0 ? left : std::chrono::milliseconds(0));
  }
  return out;
}

std::vector<std::string> MemQueue::delete_batch(std::span<const std::string> receipts) {
  if (receipts.size() > kMaxQueueBatch)
    throw QueueError(url_ + ": delete_batch takes at most 10 receipts, got " + std::to_string(receipts.size()));
  std::vector<std::string> failed;
  std::lock_guard lock(mutex_);
  for (const auto& r : receipts) {
    std::uint64_t seq = 0, nonce = 0;
    auto it = parse_receipt(r, seq, nonce) ? entries_.find(seq) : entries_.end();
    if (it == entries_.end() || it->second.nonce != nonce) {
      failed.push_back(r);
      continue;
    }
    if (it->second.in_flight) --in_flight_;
    entries_.erase(it);  // its slot in visible_ (if any) is skipped on receive
  }
  return failed;
}

std::vector<std::string> MemQueue::change_visibility_batch(std::span<const std::string> receipts,
                                                           std::chrono::milliseconds timeout) {
  if (receipts.size() > kMaxQueueBatch)
    throw QueueError(url_ + ": change_visibility_batch takes at most 10 receipts, got " + std::to_string(receipts.size()));
  std::vector<std::string> failed;
  {
    std::lock_guard lock(mutex_);
    const std::int64_t now = clock_();
    expire_locked(now);
    for (const auto& receipt : receipts) {
      std::uint64_t seq = 0, nonce = 0;
      auto it = parse_receipt(receipt, seq, nonce) ? entries_.find(seq) : entries_.end();
      if (it == entries_.end() || it->second.nonce != nonce || !it->second.in_flight) {
        failed.push_back(receipt);
        continue;
      }
      it->second.visible_at = now + timeout.count();
      timers_.push(Timer{it->second.visible_at, seq, nonce});
    }
  }
  if (timeout.count() <= 0) arrived_.notify_all();
  return failed;
}

QueueCounts MemQueue::counts() {
  std::lock_guard lock(mutex_);
  expire_locked(clock_());
  return QueueCounts{entries_.size() - in_flight_, in_flight_};
}

std::shared_ptr<Queue> open_mem_queue(const BackendUrl& u, const ClockMs& clock) {
  u.check_params({"visibility_ms", "max_receives", "max_message_bytes", "timeout_ms"});
  (void)u.call_timeout();  // validated; a mem: call never waits on anything but its receive wait
  const auto max_bytes = static_cast<std::size_t>(u.int_param("max_message_bytes", kDefaultMaxMessageBytes, 1, kMaxMessageBytesBound));
  const auto visibility = std::chrono::milliseconds(u.int_param("visibility_ms", 30000, 0, kMaxVisibilityMs));
  const int max_receives = static_cast<int>(u.int_param("max_receives", 0, 0, kMaxReceivesBound));
  const std::string& name = u.path;
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<Queue>> registry;
  auto make = [&] {
    std::shared_ptr<Queue> dlq;
    if (max_receives > 0) {
      if (name.empty()) {
        dlq = std::make_shared<MemQueue>("mem:", visibility, 0, nullptr, clock, max_bytes);
      } else {
        // Caller holds `mutex`. The dead-letter queue is the named queue NAME-dlq, as if opened
        // by its own URL (default visibility, no redrive).
        auto& slot = registry[name + "-dlq"];
        if (!slot) slot = std::make_shared<MemQueue>("mem:" + name + "-dlq", std::chrono::milliseconds(30000), 0, nullptr, clock);
        dlq = slot;
      }
    }
    return std::make_shared<MemQueue>(u.redacted(), visibility, max_receives, std::move(dlq), clock, max_bytes);
  };
  std::lock_guard lock(mutex);
  if (name.empty()) return make();
  auto& slot = registry[name];
  if (!slot) slot = make();
  return slot;
}

}  // namespace overhead::backends
