// The consumer (the seed's Lambda): reads the log queue in batches and upserts the records into
// the store, one transaction per round. A message is deleted only after its record is stored, so
// a consumer crash replays records, which the store's upsert absorbs. A record whose stamp
// patches (publish_acked, input_deleted) have not arrived yet is held back for a bounded time
// (hold_for_stamps) and count (max_held), its message undeleted, so that the patches are written
// in its upsert rather than as an UPDATE each after it; a patch message folded into a held
// record is deleted only once that record is stored. A stamp patch whose record is neither held
// nor stored yet is left undeleted and comes back after the visibility timeout. A body that is
// no log message is dead-lettered, and so is a record the store refuses for good (a permanent
// per-record failure). Store failures that a retry can help are retried with backoff; while the
// store stays down the consumer holds its round (extending the messages' visibility) instead of
// receiving more, so the log stream keeps the records and their receive counts do not grow.
// Its store calls, with their retries, are the batch step's (store_step.hpp), which `overhead
// lambda` runs on each SQS event without holding anything back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "pipe/dead_letter.hpp"
#include "ports/queue.hpp"
#include "ports/retry.hpp"
#include "ports/store.hpp"

namespace overhead::pipe {

struct ConsumerOptions {
  std::size_t max_records_per_write = 200;          // records per store transaction
  std::chrono::milliseconds wait{200};              // long-poll wait per receive
  // Once a round has its first messages, how long it goes on collecting more (up to
  // max_records_per_write) before it writes: a consumer that keeps up with its workers would
  // otherwise commit a transaction for every two or three records. Adds at most this much to the
  // time a record takes to reach the store.
  std::chrono::milliseconds linger{5};
  // How long a record may wait for its stamp patches before it is stored without them (they then
  // land as an UPDATE). Capped at a quarter of the log queue's visibility timeout, so that a held
  // message is deleted long before it would come back. 0 = store every record in its round.
  // Complete records (both stamps in) are stored max_records_per_write at a time, or with the
  // oldest record at the end of its hold, whichever comes first.
  std::chrono::milliseconds hold_for_stamps{250};
  // At most this many records held at once; beyond it the oldest are stored without waiting.
  std::size_t max_held = 2000;
  // Stop after the queue stayed empty this long, once `drain` is set (or from the start when
  // drain is null). 0 = at the first empty receive.
  std::chrono::milliseconds idle_exit{0};
  const std::atomic<bool>* drain = nullptr;         // "no more will come": stop when empty
  const std::atomic<bool>* stop = nullptr;          // stop now (SIGTERM), after the current round
  std::atomic<std::uint64_t>* progress = nullptr;   // records stored
  // Store writes that fail retryably are retried (only the records that failed); after the last
  // try, or at a permanent error, the messages stay undeleted and come back.
  ports::RetryPolicy retry = ports::RetryPolicy::jittered();
};

struct ConsumerStats {
  std::uint64_t messages = 0;
  std::uint64_t records = 0;
  std::uint64_t stamp_patches = 0;
  std::uint64_t deferred_patches = 0;  // left for redelivery (record not stored yet)
  std::uint64_t bad_messages = 0;
  std::uint64_t store_failures = 0;   // store calls that failed after their retries
  std::uint64_t store_retries = 0;
  std::uint64_t rejected_records = 0; // refused by the store for good: dead-lettered (store_failed)
  std::uint64_t store_outage_waits = 0;  // pauses with a round's messages held while the store was down
  std::int64_t elapsed_ns = 0;
};

class Consumer {
 public:
  Consumer(std::shared_ptr<ports::Queue> log, ports::Store& store, DeadLetterSink& dead_letters, ConsumerOptions options);
  ~Consumer();
  ConsumerStats run();

 // A stamp patch message and the parts of it not stored yet (consumer.cpp).
  struct PatchWait;

 private:
  // Records to store in one round (parallel vectors, the store takes a span of records).
  struct Pending;
  // Records waiting for their stamp patches, across rounds, in arrival order, by key.
  struct Held;
  // What one round holds: its records and stamp patches, their receipts, and what is settled.
  struct Round;

  // One round: receive up to max_records_per_write, store what is ready, delete. `flush` stores
  // every held record and receives nothing. Returns messages received.
  std::size_t round(ConsumerStats& stats, bool flush = false);
  // The round's steps, in order.
  // Receives until the round has max_records_per_write records or the linger ends; a body that
  // is no log message is dead-lettered (and its message settled).
  void receive(Round& r, ConsumerStats& stats);
  // Writes the stamps whose record is not stored yet (received now or held) into that record (one
  // upsert, no UPDATE).
  void fold_patches_into_records(Round& r) const;
  // Moves the held records to store now into the round: the complete ones once there are
  // max_records_per_write of them or the oldest record's hold ended, and those at the end of
  // their hold or beyond max_held (all of them on `flush`).
  void take_ready(Round& r, bool flush);
  // Stores the round's records and patches, holding the round while the store is down.
  void settle(Round& r, ConsumerStats& stats);
  // Stores the records not settled yet; sets `store_down` as store_records does.
  void store_pending_records(Round& r, ConsumerStats& stats, bool& store_down);
  // Applies the patches not settled yet; sets `store_down` when a call failed retryably.
  void store_pending_patches(Round& r, ConsumerStats& stats, bool& store_down);
  // Extends the visibility of the messages a round holds through a store outage, held ones too.
  void extend_held(const Round& r) const;
  // Deletes the messages of every settled record and of every patch whose stamps are all stored.
  void delete_settled(Round& r) const;
  // Stores `records`; returns, per record, whether it is settled (stored, or dead-lettered as
  // refused). Unsettled records keep their messages. Sets `store_down` when a store call failed
  // after its retries with an error a later retry may pass.
  std::vector<bool> store_records(const std::vector<ports::Record>& records, const std::vector<std::string>& bodies,
                                  ConsumerStats& stats, bool& store_down);
  // Sleeps `pause` unless a stop is asked meanwhile; false when stopping.
  bool pause_unless_stopped(std::chrono::milliseconds pause) const;

  std::shared_ptr<ports::Queue> log_;
  ports::Store& store_;
  DeadLetterSink& dead_letters_;
  ConsumerOptions options_;
  std::unique_ptr<Held> held_;  // records waiting for their stamp patches, across rounds
};

}  // namespace overhead::pipe
