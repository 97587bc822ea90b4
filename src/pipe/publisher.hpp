// The log publisher: hands each record to a RecordSink and reports, per record, when it is
// confirmed. A failure that a retry can help (errors.hpp) is retried with capped exponential
// backoff and jitter (retry.hpp); a permanent one is not. A record that still fails is written
// to the dead-letter sink and counted (never only printed), and reported as not ok.
//
//   SyncPublisher   delivers in the caller's thread (cases 2 and 3).
//   AsyncPublisher  a fixed pool of threads (default 10, as the seed) fed by a bounded queue:
//                   publish() blocks while `capacity` records wait, so memory and threads never
//                   grow without bound (backpressure) (cases 4 and 5).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "pipe/dead_letter.hpp"
#include "ports/record.hpp"
#include "pipe/record_sink.hpp"
#include "ports/retry.hpp"

namespace overhead::pipe {

// Told when each published record is settled: ok (confirmed by the sink) or not (dead-lettered).
// Called from a publisher thread for AsyncPublisher; must be cheap and thread-safe.
class PublishListener {
 public:
  virtual ~PublishListener() = default;
  virtual void on_published(std::uintptr_t token, bool ok, std::int64_t acked_ns) = 0;
};

struct PublisherStats {
  std::uint64_t published = 0;      // confirmed records
  std::uint64_t retries = 0;        // failed tries that were retried
  std::uint64_t failed = 0;         // records dead-lettered after the last try
  std::uint64_t stamp_failures = 0; // stamp patches dead-lettered
  std::uint64_t max_outstanding = 0;// high-water mark of records accepted but not settled
};

class Publisher {
 public:
  Publisher(RecordSink& sink, DeadLetterSink& dead_letters, ports::RetryPolicy retry, PublishListener* listener);
  virtual ~Publisher() = default;
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Publishes the record; `token` comes back to the listener. May block (backpressure).
  virtual void publish(ports::Record&& record, std::uintptr_t token) = 0;
  // Returns when every record published so far is settled.
  virtual void flush() = 0;
  // Drops records not yet handed to the sink and stops (a crash, as far as the records are
  // concerned: their inputs are not deleted and come back).
  virtual void abort() = 0;
  // Stamp patches, delivered synchronously with the same retry policy. Returns true when the
  // sink confirmed them (or there were none); a patch that still fails is dead-lettered.
  bool publish_stamps(std::span<const ports::StampPatch> patches);
  PublisherStats stats() const;

 protected:
  // Puts with retries; on final failure dead-letters. Returns true when confirmed.
  bool deliver(const ports::Record& record);
  void settle(std::uintptr_t token, bool ok);
  void note_outstanding(std::uint64_t n);

 private:
  // Runs put() under the retry policy, counting the retries.
  template <class Fn>
  ports::RetryOutcome with_retries(Fn&& put);

  RecordSink& sink_;
  DeadLetterSink& dead_letters_;
  ports::RetryPolicy retry_;
  PublishListener* listener_;
  std::atomic<std::uint64_t> published_{0}, retries_{0}, failed_{0}, stamp_failures_{0}, max_outstanding_{0};
};

class SyncPublisher final : public Publisher {
 public:
  using Publisher::Publisher;
  void publish(ports::Record&& record, std::uintptr_t token) override;
  void flush() override {}
  void abort() override {}
};

class AsyncPublisher final : public Publisher {
 public:
  // `threads` >= 1; `capacity` = records that may wait for a thread (0 = 2 x threads).
  AsyncPublisher(RecordSink& sink, DeadLetterSink& dead_letters, ports::RetryPolicy retry, PublishListener* listener,
                 unsigned threads = 10, std::size_t capacity = 0);
  ~AsyncPublisher() override;
  void publish(ports::Record&& record, std::uintptr_t token) override;
  void flush() override;
  void abort() override;

 private:
  void run();
  void stop_threads();

  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_empty_, not_full_, idle_;
  std::deque<std::pair<ports::Record, std::uintptr_t>> pending_;
  std::size_t busy_ = 0;           // records being delivered right now
  std::size_t waiting_threads_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace overhead::pipe
