// The in-process queue backend (`mem:[NAME][?visibility_ms=30000&max_receives=0&
// max_message_bytes=262144&timeout_ms=10000]`): thread-safe,
// SQS semantics, NOT durable (its messages die with the process). Named queues live in a
// process-wide registry, so the producer, the worker and the consumer of one process that open
// the same URL share one queue; no NAME = a fresh private queue. Dead letters go to mem:NAME-dlq.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <queue>
#include <unordered_map>

#include "ports/backend_url.hpp"
#include "ports/queue.hpp"

namespace overhead::backends {

class MemQueue final : public ports::Queue {
 public:
  // `dead_letters` receives messages past `max_receives` (0 = never move).
  MemQueue(std::string url, std::chrono::milliseconds visibility, int max_receives,
           std::shared_ptr<ports::Queue> dead_letters, ports::ClockMs clock,
           std::size_t max_message_bytes = ports::kDefaultMaxMessageBytes);

  std::vector<ports::SendOutcome> send_batch(std::span<const std::string> bodies) override;
  std::vector<ports::Message> receive(std::size_t max, std::chrono::milliseconds wait) override;
  std::vector<std::string> delete_batch(std::span<const std::string> receipts) override;
  std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts,
                                                   std::chrono::milliseconds timeout) override;
  ports::QueueCounts counts() override;
  std::shared_ptr<ports::Queue> dead_letter_queue() override { return dead_letters_; }
  std::chrono::milliseconds visibility_timeout() const override { return visibility_; }
  std::size_t max_message_bytes() const override { return max_message_bytes_; }
  const std::string& url() const override { return url_; }

 private:
  struct Entry {
    std::string body;
    std::int64_t visible_at = 0;  // ms on clock_; meaningful while in_flight
    std::uint64_t nonce = 0;      // current receipt's nonce; 0 = never received
    int receive_count = 0;
    bool in_flight = false;
  };
  struct Timer {
    std::int64_t at;
    std::uint64_t seq;
    std::uint64_t nonce;
    bool operator>(const Timer& o) const { return at > o.at; }
  };

  // Returns expired in-flight messages to the visible set. Caller holds mutex_.
  void expire_locked(std::int64_t now);

  const std::string url_;
  const std::chrono::milliseconds visibility_;
  const int max_receives_;
  const std::size_t max_message_bytes_;
  const std::shared_ptr<ports::Queue> dead_letters_;
  const ports::ClockMs clock_;

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::unordered_map<std::uint64_t, Entry> entries_;
  std::deque<std::uint64_t> visible_;  // FIFO of visible message seqs (may hold deleted ones)
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t next_nonce_ = 1;
  std::size_t in_flight_ = 0;
};

// The `mem:` arm of open_queue.
std::shared_ptr<ports::Queue> open_mem_queue(const ports::BackendUrl& url, const ports::ClockMs& clock);

}  // namespace overhead::backends
