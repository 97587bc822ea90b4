#include "pipe/lane_source.hpp"

#include <algorithm>
#include <string>

namespace overhead::pipe {
namespace {

constexpr char kInteractive = 'i';
constexpr char kBatch = 'b';

void tag(std::vector<SourceEntry>& entries, std::size_t from, char lane) {
  for (std::size_t i = from; i < entries.size(); ++i) entries[i].receipt.insert(entries[i].receipt.begin(), lane);
}

// The receipts of one lane, untagged.
std::vector<std::string> of_lane(std::span<const std::string> receipts, char lane) {
  std::vector<std::string> out;
  for (const auto& r : receipts)
    if (!r.empty() && r.front() == lane) out.push_back(r.substr(1));
  return out;
}

}  // namespace

LaneRule lane_rule_for(std::size_t max_decodes, unsigned threads) {
  LaneRule r;
  r.max_batch_in_flight = max_decodes > 0 ? std::max<std::size_t>(1, max_decodes / 2) : std::max(1u, threads);
  return r;
}

LaneSource::LaneSource(std::shared_ptr<QueueSource> interactive, std::shared_ptr<QueueSource> batch, LaneRule rule)
    : interactive_(std::move(interactive)), batch_(std::move(batch)), rule_(rule) {
  if (rule_.max_batch_in_flight == 0) rule_.max_batch_in_flight = 1;
  if (rule_.floor_every == 0) rule_.floor_every = 1;
  if (rule_.batch_per_poll == 0) rule_.batch_per_poll = 1;
}

bool LaneSource::poll_batch(std::size_t max, std::vector<SourceEntry>& out, PollResult& batch_result) {
  const std::size_t held = batch_in_flight_.load();
  if (held >= rule_.max_batch_in_flight) return false;
  const std::size_t room = std::min({max, rule_.max_batch_in_flight - held, rule_.batch_per_poll});
  std::vector<SourceEntry> got;
  batch_result = batch_->poll(room, std::chrono::milliseconds(0), got);
  if (batch_result != PollResult::items) return false;
  batch_in_flight_.fetch_add(got.size());
  const std::size_t from = out.size();
  for (auto& e : got) out.push_back(std::move(e));
  tag(out, from, kBatch);
  return true;
}

PollResult LaneSource::poll(std::size_t max, std::chrono::milliseconds max_wait, std::vector<SourceEntry>& out) {
  out.clear();
  PollResult batch_result = PollResult::quiet;
  // 3. The floor: one batch item ahead of a long run of interactive polls.
  if (interactive_streak_.load() >= rule_.floor_every && max > 1) {
    interactive_streak_.store(0);
    (void)poll_batch(1, out, batch_result);
  }
  // 1. Interactive first, without waiting.
  std::vector<SourceEntry> got;
  PollResult interactive_result = interactive_->poll(max - out.size(), std::chrono::milliseconds(0), got);
  if (interactive_result == PollResult::items) {
    interactive_streak_.fetch_add(1);
    const std::size_t from = out.size();
    for (auto& e : got) out.push_back(std::move(e));
    tag(out, from, kInteractive);
    return PollResult::items;
  }
  if (!out.empty()) return PollResult::items;
  interactive_streak_.store(0);
  // 2. Idle: batch items, within their bound.
  if (poll_batch(max, out, batch_result)) return PollResult::items;
  // 4. Both empty (or the batch bound reached): wait for an interactive request.
  if (interactive_result != PollResult::finished) {
    interactive_result = interactive_->poll(max, max_wait, got);
    if (interactive_result == PollResult::items) {
      interactive_streak_.fetch_add(1);
      for (auto& e : got) out.push_back(std::move(e));
      tag(out, 0, kInteractive);
      return PollResult::items;
    }
  }
  // Finished when both lanes are (idle past the exit, or stopped); while batch items are held
  // the lane is not asked, so the worker stays until they are settled.
  if (interactive_result == PollResult::finished && batch_result == PollResult::finished) return PollResult::finished;
  return PollResult::quiet;
}

std::vector<std::string> LaneSource::ack(std::span<const std::string> receipts) {
  const std::vector<std::string> batch = of_lane(receipts, kBatch);
  // Acknowledged or not (a stale receipt, a failing queue: the item comes back later), these
  // items are no longer held.
  std::size_t held = batch_in_flight_.load();
  while (!batch.empty() && !batch_in_flight_.compare_exchange_weak(held, held - std::min(held, batch.size()))) {
  }
  std::vector<std::string> failed;
  for (auto& r : interactive_->ack(of_lane(receipts, kInteractive))) failed.push_back(kInteractive + r);
  if (!batch.empty())
    for (auto& r : batch_->ack(batch)) failed.push_back(kBatch + r);
  return failed;
}

void LaneSource::extend(std::span<const std::string> receipts, std::chrono::milliseconds timeout) {
  const auto interactive = of_lane(receipts, kInteractive);
  const auto batch = of_lane(receipts, kBatch);
  if (!interactive.empty()) interactive_->extend(interactive, timeout);
  if (!batch.empty()) batch_->extend(batch, timeout);
}

void LaneSource::dead_letter(const SourceEntry& entry, const std::string& reason) {
  if (entry.receipt.empty()) return;
  SourceEntry untagged = entry;
  untagged.receipt.erase(0, 1);
  (entry.receipt.front() == kBatch ? *batch_ : *interactive_).dead_letter(untagged, reason);
}

}  // namespace overhead::pipe
