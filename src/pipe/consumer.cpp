#include "pipe/consumer.hpp"

#include <algorithm>
#include <thread>
#include <unordered_map>
#include <variant>

#include "ports/clock.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/record_codec.hpp"
#include "pipe/source.hpp"

namespace overhead::pipe {

Consumer::Consumer(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead_letters, ConsumerOptions options)
    : log_(std::move(log)), store_(store), dead_letters_(dead_letters), options_(options) {}

std::size_t Consumer::round(ConsumerStats& stats) {
  std::vector<Record> records;
  std::vector<std::string> record_receipts, record_bodies, done_receipts;
  std::vector<std::pair<std::vector<StampPatch>, std::string>> patches;
  std::size_t received = 0;
  // First receive may wait; the rest take only what is there, to fill one transaction.
  auto wait = options_.wait;
  std::chrono::steady_clock::time_point linger_until{};
  while (records.size() < options_.max_records_per_write) {
    auto messages = log_->receive(kMaxQueueBatch, wait);
    if (messages.empty()) break;
    const auto now = std::chrono::steady_clock::now();
    if (received == 0) linger_until = now + options_.linger;
    wait = std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(linger_until - now));
    received += messages.size();
    for (auto& m : messages) {
      try {
        auto msg = parse_log_message(m.body, log_->url() + " message " + m.id);
        if (auto* r = std::get_if<Record>(&msg)) {
          records.push_back(std::move(*r));
          record_receipts.push_back(std::move(m.receipt));
          record_bodies.push_back(std::move(m.body));
        } else {
          patches.emplace_back(std::move(std::get<std::vector<StampPatch>>(msg)), std::move(m.receipt));
        }
      } catch (const std::runtime_error& e) {
        dead_letters_.add(DeadLetter{kind_name(DeadLetterKind::bad_message), log_->url() + " message " + m.id, "", e.what(), m.body});
        ++stats.bad_messages;
        done_receipts.push_back(std::move(m.receipt));
      }
    }
  }
  stats.messages += received;
  // Stamps whose record is in this round are written with the record (one upsert, no UPDATE):
  // a patch names at most one batch of records, usually received in the same round. Such a
  // patch message is settled once the records it was folded into are; what it names beyond this
  // round goes to update_stamps as before.
  std::vector<std::vector<std::size_t>> folded_into(patches.size());
  if (!patches.empty() && !records.empty()) {
    std::unordered_multimap<std::string, std::size_t> record_at;
    record_at.reserve(records.size());
    for (std::size_t i = 0; i < records.size(); ++i)
      record_at.emplace(records[i].experiment_tokenizer + '\n' + records[i].id, i);
    for (std::size_t k = 0; k < patches.size(); ++k) {
      auto& list = patches[k].first;
      std::size_t kept = 0;
      for (std::size_t j = 0; j < list.size(); ++j) {
        const StampPatch& p = list[j];
        const auto [from, to] = record_at.equal_range(p.experiment_tokenizer + '\n' + p.id);
        if (from == to) {
          if (kept != j) list[kept] = std::move(list[j]);  // never a self-move: it would empty the strings
          ++kept;
          continue;
        }
        for (auto it = from; it != to; ++it) {
          Record& r = records[it->second];
          if (p.publish_acked) r.publish_acked = p.publish_acked;
          if (p.input_deleted) r.input_deleted = p.input_deleted;
          folded_into[k].push_back(it->second);
        }
      }
      list.resize(kept);
    }
  }
  std::vector<bool> record_settled(records.size(), false), patch_settled(patches.size(), false);
  // Store this round's records and patches. While the store is down (a call failed after its
  // retries) the round's messages are held, their visibility extended, and the store tried again
  // with a growing pause: receiving more would only take messages out of the log stream to let
  // them come back again and again, each time one receive nearer the dead-letter stream.
  std::vector<std::size_t> todo(records.size());
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  std::vector<std::size_t> patches_todo;  // patches with stamps left for update_stamps
  for (std::size_t k = 0; k < patches.size(); ++k) {
    if (!patches[k].first.empty()) patches_todo.push_back(k);
    else {
      patch_settled[k] = true;  // all folded into this round's records
      ++stats.stamp_patches;
    }
  }
  auto pause = std::chrono::milliseconds(100);
  auto extended = std::chrono::steady_clock::now();
  for (;;) {
    bool store_down = false;  // a call failed after its retries with an error a retry may pass
    std::vector<bool> settled;
    if (todo.size() == records.size()) {
      settled = store_records(records, record_bodies, stats, store_down);
    } else {
      std::vector<Record> part;
      std::vector<std::string> part_bodies;
      for (auto i : todo) {
        part.push_back(records[i]);
        part_bodies.push_back(record_bodies[i]);
      }
      settled = store_records(part, part_bodies, stats, store_down);
    }
    std::vector<std::size_t> left;
    for (std::size_t k = 0; k < todo.size(); ++k) {
      if (settled[k]) {
        done_receipts.push_back(record_receipts[todo[k]]);
        record_settled[todo[k]] = true;
      } else {
        left.push_back(todo[k]);
      }
    }
    todo = std::move(left);
    // All of the round's patches in one store call (one transaction), merged by key so that a
    // record patched by two messages (publish_acked in one, input_deleted in the next) is one
    // row of the update. Only when some record is not stored yet (or the call failed for good)
    // are the messages taken one by one, to settle those whose records are all there.
    std::vector<std::size_t> patches_left;
    bool patches_held = false;  // the combined call failed retryably: every open patch is held
    if (patches_todo.size() > 1) {
      std::vector<StampPatch> merged;
      std::unordered_map<std::string, std::size_t> at;
      for (auto k : patches_todo)
        for (const auto& p : patches[k].first) {
          auto [it, fresh] = at.try_emplace(p.experiment_tokenizer + '\n' + p.id, merged.size());
          if (fresh) {
            merged.push_back(p);
            continue;
          }
          StampPatch& m = merged[it->second];
          if (p.publish_acked) m.publish_acked = p.publish_acked;
          if (p.input_deleted) m.input_deleted = p.input_deleted;
        }
      std::size_t found = 0;
      const RetryOutcome o = call_with_retries(options_.retry, [&] { found = store_.update_stamps(merged); },
                                               [&] { ++stats.store_retries; });
      if (o.ok && found == merged.size()) {
        for (auto k : patches_todo) patch_settled[k] = true;
        stats.stamp_patches += patches_todo.size();
        patches_todo.clear();
      } else if (!o.ok && !o.permanent) {
        ++stats.store_failures;
        store_down = true;
        patches_held = true;
        patches_left = patches_todo;
      }
    }
    for (auto k : (patches_held ? std::vector<std::size_t>() : patches_todo)) {
      auto& list = patches[k].first;
      std::size_t found = 0;
      const RetryOutcome o = call_with_retries(options_.retry, [&] { found = store_.update_stamps(list); },
                                               [&] { ++stats.store_retries; });
      if (!o.ok) {
        ++stats.store_failures;
        if (!o.permanent) {
          store_down = true;
          patches_left.push_back(k);
        }  // a permanent failure: not deleted, the patch comes back after its visibility timeout
        continue;
      }
      ++stats.stamp_patches;
      if (found == list.size()) patch_settled[k] = true;
      else ++stats.deferred_patches;  // not deleted: the patch comes back after its visibility timeout
    }
    patches_todo = std::move(patches_left);
    if (!store_down || (todo.empty() && patches_todo.empty())) break;
    ++stats.store_outage_waits;
    if (!pause_unless_stopped(pause)) break;  // stopping: the held messages come back after their timeout
    // Capped so that the held messages' visibility is extended well before it runs out.
    pause = std::clamp(std::min(pause * 2, log_->visibility_timeout() / 4), std::chrono::milliseconds(10),
                       std::chrono::milliseconds(2000));
    if (std::chrono::steady_clock::now() - extended >= log_->visibility_timeout() / 2) {
      std::vector<std::string> held;
      for (auto i : todo) held.push_back(record_receipts[i]);
      for (auto k : patches_todo) held.push_back(patches[k].second);
      for (std::size_t i = 0; i < held.size(); i += kMaxQueueBatch)
        (void)log_->change_visibility_batch(std::span<const std::string>(held).subspan(i, std::min(kMaxQueueBatch, held.size() - i)),
                                            log_->visibility_timeout());
      extended = std::chrono::steady_clock::now();
    }
  }
  for (std::size_t k = 0; k < patches.size(); ++k) {
    bool done = patch_settled[k];
    for (auto i : folded_into[k]) done = done && record_settled[i];
    if (done) done_receipts.push_back(patches[k].second);
  }
  // A receipt that failed to delete is stale: its message was delivered again and is replayed
  // into the idempotent store.
  for (std::size_t i = 0; i < done_receipts.size(); i += kMaxQueueBatch)
    (void)log_->delete_batch(std::span<const std::string>(done_receipts).subspan(i, std::min(kMaxQueueBatch, done_receipts.size() - i)));
  return received;
}

bool Consumer::pause_unless_stopped(std::chrono::milliseconds pause) const {
  const auto until = std::chrono::steady_clock::now() + pause;
  while (std::chrono::steady_clock::now() < until) {
    if (options_.stop && options_.stop->load()) return false;
    std::this_thread::sleep_for(std::min(pause, std::chrono::milliseconds(50)));
  }
  return !(options_.stop && options_.stop->load());
}

std::vector<bool> Consumer::store_records(const std::vector<Record>& records, const std::vector<std::string>& bodies,
                                          ConsumerStats& stats, bool& store_down) {
  std::vector<bool> settled(records.size(), false);
  if (records.empty()) return settled;
  std::vector<std::size_t> todo(records.size());
  for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
  std::size_t stored = 0;
  for (int attempt = 1; !todo.empty(); ++attempt) {
    std::vector<Record> part;
    const bool whole = todo.size() == records.size();
    if (!whole)
      for (auto i : todo) part.push_back(records[i]);
    std::vector<UpsertFailure> failures;
    const RetryOutcome o = call_with_retries(
        options_.retry, [&] { failures = store_.upsert_batch(whole ? std::span<const Record>(records) : part); },
        [&] { ++stats.store_retries; });
    if (!o.ok) {
      ++stats.store_failures;  // not deleted: held while the store is down, else back after their timeout
      if (!o.permanent) store_down = true;
      break;
    }
    std::vector<bool> failed(todo.size(), false);
    std::vector<std::size_t> again;
    for (const auto& f : failures) {
      const std::size_t i = todo[f.index];
      failed[f.index] = true;
      if (f.failure.retryable && attempt < options_.retry.attempts) {
        again.push_back(i);
      } else if (!f.failure.retryable) {
        // Refused for good: a replay would be refused again, so it becomes a dead letter.
        dead_letters_.add(DeadLetter{kind_name(DeadLetterKind::store_failed), records[i].experiment_tokenizer + "/" + records[i].id,
                                     records[i].tokenizer, store_.url() + ": " + f.failure.message, bodies[i]});
        ++stats.rejected_records;
        settled[i] = true;
      }  // retryable but out of tries: left undeleted, it comes back
    }
    for (std::size_t k = 0; k < todo.size(); ++k)
      if (!failed[k]) {
        settled[todo[k]] = true;
        ++stored;
      }
    if (!again.empty()) {
      ++stats.store_retries;
      options_.retry.wait(attempt);
    }
    todo = std::move(again);
  }
  stats.records += stored;
  if (options_.progress) options_.progress->fetch_add(stored, std::memory_order_relaxed);
  return settled;
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
