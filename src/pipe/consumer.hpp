// The consumer (the seed's Lambda): reads the log queue in batches and upserts the records into
// the store, one transaction per round. A message is deleted only after its record is stored, so
// a consumer crash replays records, which the store's upsert absorbs. A stamp patch whose record
// is not stored yet is left undeleted and comes back after the visibility timeout. A body that is
// no log message is dead-lettered, and so is a record the store refuses for good (a permanent
// per-record failure). Store failures that a retry can help are retried with backoff; while the
// store stays down the consumer holds its round (extending the messages' visibility) instead of
// receiving more, so the log stream keeps the records and their receive counts do not grow.
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
  // Stop after the queue stayed empty this long, once `drain` is set (or from the start when
  // drain is null). 0 = at the first empty receive.
  std::chrono::milliseconds idle_exit{0};
  const std::atomic<bool>* drain = nullptr;         // "no more will come": stop when empty
  const std::atomic<bool>* stop = nullptr;          // stop now (SIGTERM), after the current round
  std::atomic<std::uint64_t>* progress = nullptr;   // records stored
  // Store writes that fail retryably are retried (only the records that failed); after the last
  // try, or at a permanent error, the messages stay undeleted and come back.
  RetryPolicy retry = RetryPolicy::jittered();
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
  Consumer(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead_letters, ConsumerOptions options);
  ConsumerStats run();

 private:
  // One round: receive up to max_records_per_write, store, delete. Returns messages received.
  std::size_t round(ConsumerStats& stats);
  // Stores `records`; returns, per record, whether it is settled (stored, or dead-lettered as
  // refused). Unsettled records keep their messages. Sets `store_down` when a store call failed
  // after its retries with an error a later retry may pass.
  std::vector<bool> store_records(const std::vector<Record>& records, const std::vector<std::string>& bodies,
                                  ConsumerStats& stats, bool& store_down);
  // Sleeps `pause` unless a stop is asked meanwhile; false when stopping.
  bool pause_unless_stopped(std::chrono::milliseconds pause) const;

  std::shared_ptr<Queue> log_;
  Store& store_;
  DeadLetterSink& dead_letters_;
  ConsumerOptions options_;
};

}  // namespace overhead::pipe
