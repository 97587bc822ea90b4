// The worker: takes a batch from its source; for each item decodes it (queue bodies), renders
// the chat template and encodes (the injected Processor), builds the record with every stage
// stamp, and hands it to the log publisher. The input of a batch is acknowledged (deleted from
// the queue) only after every record of the batch is confirmed by the publisher or
// dead-lettered. A crash therefore never loses a record: unacknowledged inputs come back after
// their visibility timeout and are replayed into an idempotent store.
//
// The stamps known only after a record left (publish_acked, input_deleted) travel as stamp
// patches, one message per batch, and are sent on an at-least-once path too: a batch's
// publish_acked stamps are confirmed on the log queue *before* its input is deleted (a crash
// before that leaves the input to be replayed, patch and all), and its input_deleted stamps,
// which exist only after the delete, ride in the next batch's patch, again before that batch's
// delete (or in a patch of their own when no batch follows soon: the worker waits for input,
// or stops). So a crash can cost only the input_deleted stamps of the one batch deleted last,
// never a record and never a publish_acked stamp (docs/reliability.md, "stamp patches").
//
// Prefetch (on by default, for sources with a queue): two more threads, one receiving the next
// batches while this one is being processed, one settling (stamp patch, delete), so that the
// item at a batch boundary does not pay those round trips and a receive never waits behind a
// delete. Items received but not yet settled are bounded by max_in_flight either way. A file
// source has no round trip to hide and runs in-line.
//
// Waiting for input never holds up settling: while received batches are open, each receive waits
// at most `settle_interval` (and at most a quarter of the visibility timeout), and finished
// batches are deleted and old ones extended between receives. A delete that fails leaves the
// record's input_deleted empty and is counted (delete_failures); the input comes back and its
// replay lands on the same key of the idempotent store.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipe/dead_letter.hpp"
#include "ports/decoder.hpp"
#include "pipe/generation_cancels.hpp"
#include "pipe/processor.hpp"
#include "pipe/publisher.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "reply/reply.hpp"
#include "reply/reply_path.hpp"

namespace overhead::pipe {

// Points at which the test hook runs. Throwing WorkerCrash from the hook stops the worker
// abruptly there: nothing after it happens (no publish, no delete, queued records dropped).
enum class WorkerStage { after_receive, after_render, after_publish, before_delete, after_delete };
struct WorkerCrash {};  // deliberately not a std::exception: nothing in the pipeline may swallow it

// A prompt over this many bytes is dead-lettered unless the caller sets another bound: 4 MiB is
// far above any chat prompt (a 128k-token context is about 0.5 MB), yet keeps one runaway line
// (a 50 MB record) from costing gigabytes in rendering and tokenizing.
inline constexpr std::int64_t kDefaultMaxPromptBytes = 4 << 20;

struct WorkerOptions {
  std::string name = "worker-0";
  std::string experiment = "jmtbench";
  int case_number = 0;
  std::string run_id;                // written into every record (run_id.hpp); empty = none
  std::size_t batch = 10;            // items per receive (<= 10 on a queue)
  bool prefetch = true;
  std::size_t max_in_flight = 0;     // items received but not settled; 0 = 4 x batch
  std::int64_t max_prompt_bytes = kDefaultMaxPromptBytes;  // 0 = no limit
  unsigned publishers = 0;           // 0 = synchronous publisher, N = async pool of N threads
  std::size_t publish_capacity = 0;  // async queue bound; 0 = 2 x publishers
  RetryPolicy retry = RetryPolicy::jittered();  // the log publisher's; see retry.hpp
  // The decoder stage after encode and before publish (decoder.hpp); null = none. Its transient
  // failures are retried under `decoder_retry`; an item whose decode still fails is a
  // decode_failed dead letter.
  std::shared_ptr<const Decoder> decoder;
  RetryPolicy decoder_retry = RetryPolicy::jittered();
  // Where the worker answers a gateway's requests (reply/reply_path.hpp); null = nobody waits.
  // Every item whose id can be read gets exactly one answer: its record once the log queue
  // confirmed it, or its refusal, whoever refused it (decoding the body, the processor, the
  // decoder, the publisher). Items that name no reply queue pass through a queue path untouched.
  reply::ReplyPath* replies = nullptr;
  // Generations in flight at once (Decoder::start, `--max-decodes`): the worker hands an encoded
  // item to the decoder and takes up the next while the engine generates; the decoder's callback
  // publishes the record, answers and settles the item. Past this many the worker waits for one
  // to end, so no thread is held per stream and the engine's memory stays bounded (the seed read
  // its input synchronously for that reason). Text is streamed to the replies of items that ask
  // for it. 0: decode() on the worker's thread, one item at a time (a batch run's exact timing).
  std::size_t max_decodes = 0;
  // Where the generations started through Decoder::start (max_decodes > 0) are registered by
  // request id, so an in-process gateway can cancel one (generation_cancels.hpp); null = nowhere.
  GenerationCancels* cancels = nullptr;
  // Keep the generated text in the record (`--store-text`); by default only its finish reason.
  bool store_text = false;
  // Once true (a gateway's shutdown past its deadline), items received but not yet taken up are
  // left alone: not processed, not answered, not deleted (over a shared queue they come back to
  // another worker; over mem: they end with the process). What was taken up is finished. Null:
  // every received item is processed.
  const std::atomic<bool>* abandon = nullptr;
  std::chrono::milliseconds visibility{30000};  // extend batches older than half of this
  // The longest receive wait while received batches are not yet settled.
  std::chrono::milliseconds settle_interval{100};
  std::atomic<std::uint64_t>* progress = nullptr;  // incremented per item handled
  std::function<void(WorkerStage)> fault;          // test hook, see WorkerStage
};

struct WorkerStats {
  std::uint64_t items = 0;         // entries taken from the source
  std::uint64_t ok = 0;            // records confirmed
  std::uint64_t bad_input = 0;     // entries dead-lettered before publishing
  std::uint64_t publish_failed = 0;
  std::uint64_t batches = 0;
  std::uint64_t delete_failures = 0;  // inputs not deleted (stale receipt or a failing queue): they come back
  std::int64_t elapsed_ns = 0;
  std::int64_t cpu_ns = 0;  // CPU time of the thread that ran run() (not the prefetch or publisher threads)
  PublisherStats publisher;
};

class Worker final : private PublishListener {
  class Generation;

 public:
  Worker(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead_letters,
         WorkerOptions options);
  ~Worker() override;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs until the source is finished and every record is settled. Rethrows WorkerCrash.
  WorkerStats run();

 private:
  struct Batch;
  struct Slot {
    Batch* batch = nullptr;
    std::string key, id;
    std::int64_t acked = 0;
    bool ok = false;
    // With replies: the answer, delivered once the publisher confirmed the record (or refused).
    std::unique_ptr<reply::Reply> answer;
    bool abandoned = false;  // left alone at a shutdown (WorkerOptions::abandon): its input is kept
  };
  struct Batch {
    std::int64_t index = 0;
    std::int64_t received = 0;
    std::int64_t last_extended = 0;
    std::vector<SourceEntry> entries;
    std::vector<std::string> receipts;
    std::vector<Slot> slots;
    std::atomic<std::size_t> pending{0};
  };

  void on_published(std::uintptr_t token, bool ok, std::int64_t acked_ns) override;
  void item_settled(Batch& b);
  // Polls the source once for a batch; `b` is set when the result is PollResult::items.
  PollResult poll_batch(std::shared_ptr<Batch>& b);
  void open_batch(const std::shared_ptr<Batch>& b);
  void process_batch(Batch& b);
  void process_item(Batch& b, std::size_t i);
  // The decoder stage of one item: fills the record's D stamps and output_tokens, and returns
  // the decoder's result (its text and finish reason). Throws ItemError (decode_failed) when the
  // decoder still fails after the retries.
  DecodeResult decode_item(Record& r, const ProcessResult& res, const SourceRecord& src, const std::string& tokenizer);
  // The id the item's refusal is answered under (empty: none). Reads the address of a body that
  // did not decode; never throws.
  std::string answerable_id(const SourceEntry& e, const SourceRecord* src);
  void refuse(const std::string& id, const std::string& kind, const std::string& reason);
  // The asynchronous decoder stage (max_decodes > 0): waits for room, then starts the item's
  // generation; its end publishes the record (generation_done) or dead-letters the item.
  void start_generation(Batch& b, std::size_t i, Record r, const ProcessResult& res, std::shared_ptr<const SourceRecord> src,
                        const std::string& tokenizer);
  void generation_done(Generation& g, DecodeResult d);
  void generation_failed(Generation& g, DeadLetterKind why, const std::string& reason);
  void retry_generation(std::shared_ptr<Generation> g);
  void retry_loop();
  void wait_generations();
  void release_generation();
  void dead_letter_item(Batch& b, std::size_t i, const std::string& kind, const std::string& reason,
                        const std::string& tokenizer);
  // Acknowledges ready batches in order; with `wait`, blocks until the front one is ready.
  // Returns false when nothing is open.
  bool settle(bool wait);
  void extend_old_batches();
  // Sends the input_deleted stamps still held (see deleted_stamps_); false when that failed.
  bool send_deleted_stamps();
  // The same, but only when no batch is open whose patch could carry them.
  void send_deleted_stamps_if_idle();
  // With prefetch: the receiving thread and the settling thread, and how either stops the run.
  void receive_loop();
  void settle_loop();
  void fail_io();
  void hook(WorkerStage stage) {
    if (options_.fault) options_.fault(stage);
  }

  Source& source_;
  const Processor& processor_;
  DeadLetterSink& dead_letters_;
  WorkerOptions options_;
  std::unique_ptr<Publisher> publisher_;
  std::int64_t wall_offset_ns_ = 0;  // wall = monotonic + offset, fixed at start (one clock read per stamp)

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
  std::deque<std::shared_ptr<Batch>> open_;     // received, not yet settled, in order
  std::deque<std::shared_ptr<Batch>> channel_;  // prefetched, not yet processed
  std::size_t unsettled_ = 0;
  bool source_done_ = false;
  bool worker_done_ = false;
  bool aborted_ = false;
  std::exception_ptr io_error_;

  // input_deleted stamps of batches already deleted, not yet sent: they go out with the next
  // batch's publish_acked patch. Touched only by the thread that settles.
  std::vector<StampPatch> deleted_stamps_;

  // Generations started and not ended; retries waiting for their backoff, run by retry_thread_.
  std::mutex decode_mutex_;
  std::condition_variable decode_cv_;
  std::size_t generations_ = 0;
  std::deque<std::shared_ptr<Generation>> retries_;
  bool retry_stop_ = false;
  std::thread retry_thread_;
  std::string attempt_prefix_;  // unique per worker: "<name>-<random>-"
  std::string decoder_kind_;    // what its answers say decoded them: "openai", "sim", "none"
  std::atomic<std::uint64_t> attempts_{0};

  std::int64_t next_batch_index_ = 0;
  std::int64_t next_seq_ = 0;
  std::atomic<std::uint64_t> items_{0}, ok_{0}, bad_{0}, publish_failed_{0}, batches_{0}, delete_failures_{0};
};

}  // namespace overhead::pipe
