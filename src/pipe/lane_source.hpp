// A worker's two lanes as one source: the input queue (interactive requests, a gateway's chat
// completions) and its batch lane (the Batch API's items, "<input>-batch-lane",
// backends/queue_siblings.hpp). The worker's batch loop polls this source as it polls any other;
// the rule of which lane a poll reads is kept here, in one place:
//
//   1. Interactive first: every poll asks the input queue first, without waiting.
//   2. Batch items fill idle capacity only: the lane is read when the input queue had nothing, and
//      at most `max_batch_in_flight` batch items are held at once (received, not yet settled), so
//      that a burst of interactive requests finds free generation slots rather than a worker full
//      of batch work.
//   3. A floor against starvation: after `floor_every` polls in a row that found interactive items,
//      the next poll takes one batch item first (when the bound of 2 allows), so a batch moves
//      even under a steady interactive load.
//   4. When both lanes are empty, the poll waits on the input queue (an interactive request is
//      taken the moment it arrives); a batch item waits at most that long.
//
// Receipts are tagged with their lane ("i" or "b" before the queue's own receipt), so acks,
// extensions and dead letters reach the queue the entry came from.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include "pipe/source.hpp"

namespace overhead::pipe {

struct LaneRule {
  std::size_t max_batch_in_flight = 8;  // batch items received and not settled, at most
  std::size_t floor_every = 8;          // interactive polls in a row before one batch item goes first
  // Batch items taken per poll: the worker renders and encodes a poll's items in a row, so an
  // interactive request arriving meanwhile waits behind at most this many.
  std::size_t batch_per_poll = 2;
};

// The rule for a worker host of `threads` threads with `max_decodes` generations in flight in all
// (0: one item at a time per thread): batch items take at most half the generation slots (at least
// one), or one item per thread.
[[nodiscard]] LaneRule lane_rule_for(std::size_t max_decodes, unsigned threads);

class LaneSource final : public Source {
 public:
  LaneSource(std::shared_ptr<QueueSource> interactive, std::shared_ptr<QueueSource> batch, LaneRule rule);
  PollResult poll(std::size_t max, std::chrono::milliseconds max_wait, std::vector<SourceEntry>& out) override;
  std::vector<std::string> ack(std::span<const std::string> receipts) override;
  void extend(std::span<const std::string> receipts, std::chrono::milliseconds timeout) override;
  bool has_acks() const override { return true; }
  void dead_letter(const SourceEntry& entry, const std::string& reason) override;
  std::size_t expected() const override { return 0; }
  // Batch items received and not yet acknowledged (for tests and metrics).
  [[nodiscard]] std::size_t batch_in_flight() const { return batch_in_flight_.load(); }

 private:
  // Takes up to `max` batch items without waiting, within the in-flight bound; true when any came.
  bool poll_batch(std::size_t max, std::vector<SourceEntry>& out, PollResult& batch_result);

  std::shared_ptr<QueueSource> interactive_, batch_;
  LaneRule rule_;
  std::atomic<std::size_t> batch_in_flight_{0};
  std::atomic<std::size_t> interactive_streak_{0};
};

}  // namespace overhead::pipe
