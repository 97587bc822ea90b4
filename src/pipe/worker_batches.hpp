// The worker's batch loop: receives batches from the source, hands each to the item stage
// (BatchWork), and settles them in order once every item of a batch is settled: the batch's
// stamp patch (publish_acked, with the input_deleted stamps of the batches deleted before it),
// then the delete of its input, then its input_deleted stamps held for the next patch. Between
// receives it extends batches older than half the visibility timeout. With prefetch it runs the
// receiving and the settling on two threads of their own (worker.hpp says why); a file source
// runs in-line. The guarantees are listed at the top of worker.hpp; this file keeps them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipe/publisher.hpp"
#include "pipe/source.hpp"
#include "reply/reply.hpp"

namespace overhead::pipe {

struct WorkerOptions;
enum class WorkerStage;
struct ReceivedBatch;

// One received item, from the item stage taking it up until its batch is deleted.
struct ItemSlot {
  ReceivedBatch* batch = nullptr;
  std::string key, id;     // the record's key in the store, for its stamp patches
  std::int64_t acked = 0;  // when the log queue confirmed the record
  bool ok = false;         // confirmed (a dead-lettered item gets no stamps)
  // With replies: the answer, delivered once the publisher confirmed the record (or refused).
  std::unique_ptr<reply::Reply> answer;
  bool abandoned = false;  // left alone at a shutdown (WorkerOptions::abandon): its input is kept
};

// The entries of one receive, and what settles them: the batch is deleted once `pending` is 0.
struct ReceivedBatch {
  std::int64_t index = 0;
  std::int64_t received = 0;
  std::int64_t last_extended = 0;
  std::vector<SourceEntry> entries;
  std::vector<std::string> receipts;
  std::vector<ItemSlot> slots;
  std::atomic<std::size_t> pending{0};  // items not yet settled
};

// What the loop hands its batches to: the item stage.
class BatchWork {
 public:
  virtual ~BatchWork() = default;
  // Takes up every item of the batch, in order; each settles (BatchLoop::item_settled) now or
  // later (a record confirmed by the publisher, a generation that ends).
  virtual void take_up(ReceivedBatch& batch) = 0;
  // Returns when nothing taken up is still running on another thread (generations in flight).
  virtual void drain() = 0;
};

struct BatchLoopStats {
  std::uint64_t batches = 0;
  std::uint64_t delete_failures = 0;
};

class BatchLoop {
 public:
  // `options` must outlive the loop; its batch, max_in_flight, prefetch, visibility,
  // settle_interval and fault are read.
  BatchLoop(Source& source, const WorkerOptions& options);
  BatchLoop(const BatchLoop&) = delete;
  BatchLoop& operator=(const BatchLoop&) = delete;

  // Runs until the source is finished and every batch is settled. Rethrows WorkerCrash and the
  // first I/O failure of any thread (after stopping the others and aborting the publisher).
  void run(BatchWork& work, Publisher& publisher);
  // An item of `b` is settled (confirmed, dead-lettered or abandoned). Any thread.
  void item_settled(ReceivedBatch& b);
  // Stops the run with the exception being handled (a thread that must not throw: a generation's
  // callback, an I/O thread); run() rethrows it.
  void fail();
  [[nodiscard]] BatchLoopStats stats() const;

 private:
  // Polls the source once for a batch; `b` is set when the result is PollResult::items.
  PollResult poll_batch(std::shared_ptr<ReceivedBatch>& b);
  void open_batch(const std::shared_ptr<ReceivedBatch>& b);
  void process_batch(ReceivedBatch& b);
  // Acknowledges ready batches in order; with `wait`, blocks until the front one is ready.
  // Returns false when nothing is open.
  bool settle(bool wait);
  // settle(false) while the front batch is ready.
  void settle_ready();
  void extend_old_batches();
  // Sends the input_deleted stamps still held (see deleted_stamps_); false when that failed.
  bool send_deleted_stamps();
  // The same, but only when no batch is open whose patch could carry them.
  void send_deleted_stamps_if_idle();
  // The longest receive (or settler) wait while batches are open.
  [[nodiscard]] std::chrono::milliseconds open_wait() const;
  // The two ways of running: with prefetch (a receiving and a settling thread) or in-line.
  void run_prefetching();
  void run_inline();
  void receive_loop();
  void settle_loop();
  void join_io();
  // In-line, nothing else notices a failure that fail() recorded (a generation's end on the
  // decoder's thread): the loop asks.
  void rethrow_if_failed();
  void hook(WorkerStage stage) const;

  Source& source_;
  const WorkerOptions& options_;
  BatchWork* work_ = nullptr;      // during run()
  Publisher* publisher_ = nullptr;  // during run()
  std::thread receiver_, settler_;  // with prefetch

  std::mutex mutex_;
  // One condition per waiter, so that an event wakes only the thread it concerns (on a busy
  // machine every needless wake-up costs a context switch at a batch boundary):
  std::condition_variable cv_;        // an open batch settled its last item, or the worker is done
  std::condition_variable room_cv_;   // a batch was settled: room for the receiving thread
  std::condition_variable batch_cv_;  // a batch (or the end of the source) for the processing thread
  void notify_all_waiters() {
    cv_.notify_all();
    room_cv_.notify_all();
    batch_cv_.notify_all();
  }
  std::deque<std::shared_ptr<ReceivedBatch>> open_;     // received, not yet settled, in order
  std::deque<std::shared_ptr<ReceivedBatch>> channel_;  // prefetched, not yet processed
  std::size_t unsettled_ = 0;
  bool source_done_ = false;
  bool worker_done_ = false;
  bool aborted_ = false;
  std::exception_ptr io_error_;

  // input_deleted stamps of batches already deleted, not yet sent: they go out with the next
  // batch's publish_acked patch. Touched only by the thread that settles.
  std::vector<ports::StampPatch> deleted_stamps_;

  std::int64_t next_batch_index_ = 0;
  std::atomic<std::uint64_t> batches_{0}, delete_failures_{0};
};

}  // namespace overhead::pipe
