#include "pipe/consumer.hpp"

#include <thread>
#include <variant>

#include "pipe/clock.hpp"
#include "pipe/record_codec.hpp"
#include "pipe/source.hpp"

namespace overhead::pipe {

Consumer::Consumer(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead_letters, ConsumerOptions options)
    : log_(std::move(log)), store_(store), dead_letters_(dead_letters), options_(options) {}

std::size_t Consumer::round(ConsumerStats& stats) {
  std::vector<Record> records;
  std::vector<std::string> record_receipts, done_receipts;
  std::vector<std::pair<std::vector<StampPatch>, std::string>> patches;
  std::size_t received = 0;
  // First receive may wait; the rest take only what is there, to fill one transaction.
  auto wait = options_.wait;
  while (records.size() < options_.max_records_per_write) {
    auto messages = log_->receive(kMaxQueueBatch, wait);
    wait = std::chrono::milliseconds(0);
    if (messages.empty()) break;
    received += messages.size();
    for (auto& m : messages) {
      try {
        auto msg = parse_log_message(m.body, log_->url() + " message " + m.id);
        if (auto* r = std::get_if<Record>(&msg)) {
          records.push_back(std::move(*r));
          record_receipts.push_back(std::move(m.receipt));
        } else {
          patches.emplace_back(std::move(std::get<std::vector<StampPatch>>(msg)), std::move(m.receipt));
        }
      } catch (const std::runtime_error& e) {
        dead_letters_.add(DeadLetter{"bad_message", log_->url() + " message " + m.id, "", e.what(), m.body});
        ++stats.bad_messages;
        done_receipts.push_back(std::move(m.receipt));
      }
    }
  }
  stats.messages += received;
  try {
    store_.upsert_batch(records);
  } catch (const std::exception&) {
    // Not deleted: the messages come back after their visibility timeout.
    ++stats.store_failures;
    record_receipts.clear();
    records.clear();
  }
  stats.records += records.size();
  if (options_.progress) options_.progress->fetch_add(records.size(), std::memory_order_relaxed);
  done_receipts.insert(done_receipts.end(), record_receipts.begin(), record_receipts.end());
  for (auto& [list, receipt] : patches) {
    try {
      const std::size_t found = store_.update_stamps(list);
      ++stats.stamp_patches;
      if (found == list.size()) done_receipts.push_back(std::move(receipt));
      else ++stats.deferred_patches;
    } catch (const std::exception&) {
      ++stats.store_failures;
    }
  }
  for (std::size_t i = 0; i < done_receipts.size(); i += kMaxQueueBatch)
    log_->delete_batch(std::span<const std::string>(done_receipts).subspan(i, std::min(kMaxQueueBatch, done_receipts.size() - i)));
  return received;
}

ConsumerStats Consumer::run() {
  ConsumerStats stats;
  const std::int64_t start = monotonic_ns();
  auto idle_since = std::chrono::steady_clock::now();
  for (;;) {
    if (options_.stop && options_.stop->load()) break;
    const bool draining = !options_.drain || options_.drain->load();
    if (round(stats) > 0) {
      idle_since = std::chrono::steady_clock::now();
      continue;
    }
    if (!draining) {
      idle_since = std::chrono::steady_clock::now();
      continue;
    }
    // Deferred patches stay in flight until their visibility ends; only visible work counts.
    if (log_->counts().visible == 0 && std::chrono::steady_clock::now() - idle_since >= options_.idle_exit) break;
  }
  stats.elapsed_ns = monotonic_ns() - start;
  return stats;
}

}  // namespace overhead::pipe
