#include "pipe/consumer.hpp"

#include <algorithm>
#include <list>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "ports/clock.hpp"
#include "pipe/dead_letter.hpp"
#include "ports/record_codec.hpp"
#include "pipe/source.hpp"
#include "pipe/store_step.hpp"

namespace overhead::pipe {

using ports::kMaxQueueBatch;
using ports::monotonic_ns;
using ports::parse_log_message;
using ports::Queue;
using ports::Record;
using ports::StampPatch;
using ports::Store;

// A stamp patch message, deleted once everything it carried is stored: the records its stamps
// were folded into and, when some of its stamps named no record at hand, its own update_stamps.
struct Consumer::PatchWait {
  std::string receipt;
  std::size_t open = 0;     // parts not stored yet
  bool given_up = false;    // a part was not stored: the message is left to come back
};

namespace {

// One part of a patch message is stored; the message is settled when its last part is.
void release_patch_part(Consumer::PatchWait& w, std::vector<std::string>& done_receipts) {
  if (--w.open == 0 && !w.given_up) done_receipts.push_back(w.receipt);
}

std::string record_stamp_key(const std::string& experiment_tokenizer, const std::string& id) {
  std::string key;
  key.reserve(experiment_tokenizer.size() + 1 + id.size());
  key.append(experiment_tokenizer).push_back('\n');
  key.append(id);
  return key;
}

}  // namespace

struct Consumer::Pending {
  std::vector<Record> records;
  std::vector<std::string> receipts, bodies;
  std::vector<std::vector<std::shared_ptr<PatchWait>>> patches;  // the patch messages folded in

  std::size_t size() const { return records.size(); }
};

// The records waiting for their stamps, kept across rounds. A list, so that a record is moved
// once (when it is stored) however many rounds it waits, with an index by key for the patches.
struct Consumer::Held {
  struct Entry {
    Record record;
    std::string receipt, body;
    std::chrono::steady_clock::time_point hold_until;  // stored then at the latest
    std::vector<std::shared_ptr<PatchWait>> patches;    // the patch messages folded in
    bool complete = false;                              // both stamps in: listed in `complete`
  };
  std::list<Entry> entries;  // arrival order
  std::unordered_multimap<std::string, std::list<Entry>::iterator> at;
  std::vector<std::list<Entry>::iterator> complete;  // entries with both stamps, in order of completion

  // Lists the entry as complete when both of its stamps are in (once).
  void note_if_complete(std::list<Entry>::iterator e) {
    if (e->complete || e->record.publish_acked == 0 || e->record.input_deleted == 0) return;
    e->complete = true;
    complete.push_back(e);
  }

  void add(Record&& record, std::string&& receipt, std::string&& body, std::chrono::steady_clock::time_point until) {
    std::string key = record_stamp_key(record.experiment_tokenizer, record.id);
    entries.push_back(Entry{std::move(record), std::move(receipt), std::move(body), until, {}, false});
    at.emplace(std::move(key), std::prev(entries.end()));
  }
  // Moves the entry into `to` (the records stored this round) and forgets it.
  void move_out(std::list<Entry>::iterator e, Pending& to) {
    const auto [from, end] = at.equal_range(record_stamp_key(e->record.experiment_tokenizer, e->record.id));
    for (auto it = from; it != end; ++it)
      if (it->second == e) {
        at.erase(it);
        break;
      }
    to.records.push_back(std::move(e->record));
    to.receipts.push_back(std::move(e->receipt));
    to.bodies.push_back(std::move(e->body));
    to.patches.push_back(std::move(e->patches));
    entries.erase(e);
  }
};

Consumer::Consumer(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead_letters, ConsumerOptions options)
    : log_(std::move(log)), store_(store), dead_letters_(dead_letters), options_(options), held_(std::make_unique<Held>()) {}

Consumer::~Consumer() = default;

struct Consumer::Round {
  Pending records;  // stored this round
  std::size_t received = 0;
  std::size_t new_records = 0;
  std::vector<std::string> done_receipts;  // messages settled: deleted at the end of the round
  // The round's patch messages: stamps left to write (not folded into a record at hand), message.
  std::vector<std::pair<std::vector<StampPatch>, std::shared_ptr<PatchWait>>> patches;
  std::vector<std::size_t> records_todo;  // records not settled yet
  std::vector<std::size_t> patches_todo;  // patches with stamps left for update_stamps
};

std::size_t Consumer::round(ConsumerStats& stats, bool flush) {
  Round r;
  if (!flush) receive(r, stats);
  stats.messages += r.received;
  fold_patches_into_records(r);
  take_ready(r, flush);
  settle(r, stats);
  delete_settled(r);
  return r.received;
}

void Consumer::receive(Round& r, ConsumerStats& stats) {
  // First receive may wait (no longer than the first held record may); the rest take only what
  // is there, to fill one transaction.
  auto wait = options_.wait;
  if (!held_->entries.empty())
    wait = std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(held_->entries.front().hold_until - std::chrono::steady_clock::now()),
                      std::chrono::milliseconds(0), wait);
  const auto hold = std::max(std::chrono::milliseconds(0), std::min(options_.hold_for_stamps, log_->visibility_timeout() / 4));
  std::chrono::steady_clock::time_point linger_until{};
  while (r.new_records < options_.max_records_per_write) {
    auto messages = log_->receive(kMaxQueueBatch, wait);
    if (messages.empty()) break;
    const auto now = std::chrono::steady_clock::now();
    if (r.received == 0) linger_until = now + options_.linger;
    wait = std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(linger_until - now));
    r.received += messages.size();
    for (auto& m : messages) {
      try {
        auto msg = parse_log_message(m.body, log_->url() + " message " + m.id);
        if (auto* record = std::get_if<Record>(&msg)) {
          held_->add(std::move(*record), std::move(m.receipt), std::move(m.body), now + hold);
          ++r.new_records;
          held_->note_if_complete(std::prev(held_->entries.end()));  // a replay may come with both
        } else {
          auto wait_for = std::make_shared<PatchWait>();
          wait_for->receipt = std::move(m.receipt);
          r.patches.emplace_back(std::move(std::get<std::vector<StampPatch>>(msg)), std::move(wait_for));
        }
      } catch (const std::runtime_error& e) {
        dead_letters_.add(DeadLetter{kind_name(DeadLetterKind::bad_message), log_->url() + " message " + m.id, "", e.what(), m.body});
        ++stats.bad_messages;
        r.done_receipts.push_back(std::move(m.receipt));
      }
    }
  }
}

// A patch names at most two batches of records (this batch's publish_acked, the previous one's
// input_deleted), usually received in this round or held from an earlier one. What it names
// beyond those stays in the patch and goes to update_stamps as before.
void Consumer::fold_patches_into_records(Round& r) const {
  for (auto& [list, wait] : r.patches) {
    std::size_t kept = 0;
    for (std::size_t j = 0; j < list.size(); ++j) {
      const StampPatch& p = list[j];
      const auto [from, to] = held_->at.equal_range(record_stamp_key(p.experiment_tokenizer, p.id));
      if (from == to) {
        if (kept != j) list[kept] = std::move(list[j]);  // never a self-move: it would empty the strings
        ++kept;
        continue;
      }
      for (auto it = from; it != to; ++it) {
        Held::Entry& e = *it->second;
        if (p.publish_acked) e.record.publish_acked = p.publish_acked;
        if (p.input_deleted) e.record.input_deleted = p.input_deleted;
        e.patches.push_back(wait);
        ++wait->open;
        held_->note_if_complete(it->second);
      }
    }
    list.resize(kept);
    // The patch's own stamps (those naming no record at hand) are one more part of it.
    if (!list.empty()) ++wait->open;
    else if (wait->open == 0) r.done_receipts.push_back(wait->receipt);  // an empty patch
  }
}

// A record is stored once both stamps are in, or when its hold ends; beyond max_held the oldest
// are stored anyway (the newest wait), so that memory stays bounded however the patches lag.
// Complete records are stored together: once a transaction's worth (max_records_per_write) is
// complete, or when the oldest record's hold ends (its patches lag), since a transaction of a few
// records costs more in its commit than in its rows. So a record waits at most its hold.
// The entries are in arrival order, and so in order of their hold's end.
void Consumer::take_ready(Round& r, bool flush) {
  Held& h = *held_;
  if (h.entries.empty()) return;
  const bool hold = options_.hold_for_stamps.count() > 0;
  const auto now = std::chrono::steady_clock::now();
  const auto due = [&](const Held::Entry& e) { return flush || !hold || now >= e.hold_until || h.entries.size() > options_.max_held; };
  if (h.complete.size() < options_.max_records_per_write && !due(h.entries.front())) return;
  for (auto e : h.complete) h.move_out(e, r.records);
  h.complete.clear();
  while (!h.entries.empty() && due(h.entries.front())) h.move_out(h.entries.begin(), r.records);
}

// While the store is down (a call failed after its retries) the round's messages are held, their
// visibility extended, and the store tried again with a growing pause: receiving more would only
// take messages out of the log stream to let them come back again and again, each time one
// receive nearer the dead-letter stream.
void Consumer::settle(Round& r, ConsumerStats& stats) {
  r.records_todo.resize(r.records.size());
  for (std::size_t i = 0; i < r.records_todo.size(); ++i) r.records_todo[i] = i;
  for (std::size_t k = 0; k < r.patches.size(); ++k) {
    if (!r.patches[k].first.empty()) r.patches_todo.push_back(k);
    else ++stats.stamp_patches;  // all folded into records at hand
  }
  auto pause = std::chrono::milliseconds(100);
  auto extended = std::chrono::steady_clock::now();
  for (;;) {
    bool store_down = false;  // a call failed after its retries with an error a retry may pass
    store_pending_records(r, stats, store_down);
    store_pending_patches(r, stats, store_down);
    if (!store_down || (r.records_todo.empty() && r.patches_todo.empty())) break;
    ++stats.store_outage_waits;
    if (!pause_unless_stopped(pause)) break;  // stopping: the held messages come back after their timeout
    // Capped so that the held messages' visibility is extended well before it runs out.
    pause = std::clamp(std::min(pause * 2, log_->visibility_timeout() / 4), std::chrono::milliseconds(10),
                       std::chrono::milliseconds(2000));
    if (std::chrono::steady_clock::now() - extended >= log_->visibility_timeout() / 2) {
      extend_held(r);
      extended = std::chrono::steady_clock::now();
    }
  }
  // What is still not stored keeps its message, and so do the patches folded into it.
  for (auto i : r.records_todo)
    for (auto& w : r.records.patches[i]) w->given_up = true;
  for (auto k : r.patches_todo) r.patches[k].second->given_up = true;
}

void Consumer::store_pending_records(Round& r, ConsumerStats& stats, bool& store_down) {
  std::vector<bool> settled;
  if (r.records_todo.size() == r.records.size()) {
    settled = store_records(r.records.records, r.records.bodies, stats, store_down);
  } else {
    std::vector<Record> part;
    std::vector<std::string> part_bodies;
    for (auto i : r.records_todo) {
      part.push_back(r.records.records[i]);
      part_bodies.push_back(r.records.bodies[i]);
    }
    settled = store_records(part, part_bodies, stats, store_down);
  }
  std::vector<std::size_t> left;
  for (std::size_t k = 0; k < r.records_todo.size(); ++k) {
    const std::size_t i = r.records_todo[k];
    if (settled[k]) {
      r.done_receipts.push_back(r.records.receipts[i]);
      for (auto& w : r.records.patches[i]) release_patch_part(*w, r.done_receipts);
    } else {
      left.push_back(i);
    }
  }
  r.records_todo = std::move(left);
}

// All of the round's patches in one store call (one transaction), merged by key so that a record
// patched by two messages (publish_acked in one, input_deleted in the next) is one row of the
// update. Only when some record is not stored yet (or the call failed for good) are the messages
// taken one by one, to settle those whose records are all there.
void Consumer::store_pending_patches(Round& r, ConsumerStats& stats, bool& store_down) {
  std::vector<std::size_t> patches_left;
  bool patches_held = false;  // the combined call failed retryably: every open patch is held
  if (r.patches_todo.size() > 1) {
    std::vector<StampPatch> merged;
    std::unordered_map<std::string, std::size_t> at;
    for (auto k : r.patches_todo)
      for (const auto& p : r.patches[k].first) {
        auto [it, fresh] = at.try_emplace(record_stamp_key(p.experiment_tokenizer, p.id), merged.size());
        if (fresh) {
          merged.push_back(p);
          continue;
        }
        StampPatch& m = merged[it->second];
        if (p.publish_acked) m.publish_acked = p.publish_acked;
        if (p.input_deleted) m.input_deleted = p.input_deleted;
      }
    const StampsOutcome o = apply_stamps(store_, merged, options_.retry, [&] { ++stats.store_retries; });
    if (o.result() == StampsOutcome::Result::applied) {
      for (auto k : r.patches_todo) release_patch_part(*r.patches[k].second, r.done_receipts);
      stats.stamp_patches += r.patches_todo.size();
      r.patches_todo.clear();
    } else if (!o.call.ok && !o.call.permanent) {
      ++stats.store_failures;
      store_down = true;
      patches_held = true;
      patches_left = r.patches_todo;
    }
  }
  for (auto k : (patches_held ? std::vector<std::size_t>() : r.patches_todo)) {
    const StampsOutcome o = apply_stamps(store_, r.patches[k].first, options_.retry, [&] { ++stats.store_retries; });
    if (o.result() == StampsOutcome::Result::failed) {
      ++stats.store_failures;
      if (!o.call.permanent) {
        store_down = true;
        patches_left.push_back(k);
      } else {
        r.patches[k].second->given_up = true;  // not deleted: back after its visibility timeout
      }
      continue;
    }
    ++stats.stamp_patches;
    if (o.result() == StampsOutcome::Result::applied) {
      release_patch_part(*r.patches[k].second, r.done_receipts);
    } else {
      r.patches[k].second->given_up = true;  // not deleted: the patch comes back after its visibility timeout
      ++stats.deferred_patches;
    }
  }
  r.patches_todo = std::move(patches_left);
}

void Consumer::extend_held(const Round& r) const {
  std::vector<std::string> held;
  std::unordered_set<const Consumer::PatchWait*> listed;
  const auto add_patches = [&](const std::vector<std::shared_ptr<PatchWait>>& waits) {
    for (const auto& w : waits)
      if (listed.insert(w.get()).second) held.push_back(w->receipt);
  };
  for (auto i : r.records_todo) {
    held.push_back(r.records.receipts[i]);
    add_patches(r.records.patches[i]);
  }
  for (auto k : r.patches_todo)
    if (listed.insert(r.patches[k].second.get()).second) held.push_back(r.patches[k].second->receipt);
  for (const auto& e : held_->entries) {
    held.push_back(e.receipt);
    add_patches(e.patches);
  }
  for (std::size_t i = 0; i < held.size(); i += kMaxQueueBatch)
    (void)log_->change_visibility_batch(std::span<const std::string>(held).subspan(i, std::min(kMaxQueueBatch, held.size() - i)),
                                        log_->visibility_timeout());
}

// A receipt that fails to delete is stale: its message was delivered again and is replayed into
// the idempotent store.
void Consumer::delete_settled(Round& r) const {
  for (std::size_t i = 0; i < r.done_receipts.size(); i += kMaxQueueBatch)
    (void)log_->delete_batch(std::span<const std::string>(r.done_receipts).subspan(i, std::min(kMaxQueueBatch, r.done_receipts.size() - i)));
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
    const UpsertOutcome o = upsert_with_retries(store_, whole ? std::span<const Record>(records) : part, options_.retry,
                                                [&] { ++stats.store_retries; });
    if (!o.call.ok) {
      ++stats.store_failures;  // not deleted: held while the store is down, else back after their timeout
      if (!o.call.permanent) store_down = true;
      break;
    }
    std::vector<bool> failed(todo.size(), false);
    std::vector<std::size_t> again;
    for (const auto& f : o.refused) {
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
  // Stopping or drained: what still waits for its stamps is stored now (without a store, it stays
  // undeleted and comes back).
  if (!held_->entries.empty()) round(stats, true);
  stats.elapsed_ns = monotonic_ns() - start;
  return stats;
}

}  // namespace overhead::pipe
