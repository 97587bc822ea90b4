// The worker's item stage: what happens to one received item. It reads the queue body, renders
// and encodes through the Processor, runs the generation through the Decoder (when there is
// one), builds the record with every stage stamp, publishes it (it owns the log publisher), and
// answers the reply path exactly once per item it can address: the record once the log queue
// confirmed it, or the refusal, whoever refused. Each item then settles into its batch
// (BatchLoop::item_settled), whose delete the batch loop does.
//
// Every generation goes through Decoder::start. With max_decodes > 0 up to that many run at once
// and their ends (on the decoder's thread) publish and settle their items; a failed try waits
// its backoff on a retry thread. With max_decodes = 0 the worker's thread starts one and waits
// for its end, then publishes itself: one item at a time, the decode stamps right after encode
// and publish right after decode, as a batch run's timing wants; retries wait on that thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "pipe/dead_letter.hpp"
#include "pipe/engine_share.hpp"
#include "pipe/processor.hpp"
#include "pipe/publisher.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "pipe/worker_batches.hpp"
#include "ports/decoder.hpp"

namespace overhead::pipe {

struct WorkerOptions;
enum class WorkerStage;

struct ItemStageStats {
  std::uint64_t items = 0, ok = 0, bad_input = 0, publish_failed = 0;
  // Answers whose engine read another number of prompt tokens than we sent (Record::prompt_tokens_mismatch).
  std::uint64_t prompt_token_mismatches = 0;
};

class ItemStage final : public BatchWork, private PublishListener {
 public:
  // `options` must outlive the stage (and be normalized: worker.cpp); `loop` is told when an item
  // settles and when a generation's end fails the run.
  ItemStage(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead_letters,
            const WorkerOptions& options, BatchLoop& loop);
  ~ItemStage() override;
  ItemStage(const ItemStage&) = delete;
  ItemStage& operator=(const ItemStage&) = delete;

  // Fixes the wall clock the records' start_time and end_time are written in (once per run).
  void begin_run();
  void take_up(ReceivedBatch& b) override;
  void drain() override;
  [[nodiscard]] Publisher& publisher() { return *publisher_; }
  [[nodiscard]] ItemStageStats stats() const;

 private:
  class Generation;
  struct Ending;

  void process_item(ReceivedBatch& b, std::size_t i);
  // The record's fields known once the item is encoded (everything but the decode stamps).
  void fill_record(ports::Record& r, const SourceRecord& src, const std::string& tokenizer, const ReceivedBatch& b,
                   std::size_t i, std::int64_t taken_up, std::int64_t seq) const;
  // The record's price (cost_usd, cost_e_usd, cost_d_usd, price_source) from the item's CPU time
  // on the worker, its tokens and its share of the engine's time; nothing without a pricer.
  void price_record(ports::Record& r, std::int64_t cpu_ns, double engine_share_s, bool decoded) const;
  // Publishes the item's record; with replies, its answer waits in the slot for the confirmation.
  void publish_record(ItemSlot& slot, ports::Record r, std::string text, std::string finish_reason, std::string attempt);
  // A Batch API item's refusal (SourceRecord::batch): stored as its record (finish_reason "error",
  // text "KIND: REASON"), so that its line is answered; also dead-lettered as any refusal is.
  void publish_batch_refusal(ItemSlot& slot, ports::Record r, const std::string& kind, const std::string& reason);
  // The decoder stage of one item, on one of the two schedules (see the top of this file).
  std::shared_ptr<Generation> make_generation(ReceivedBatch& b, std::size_t i, ports::Record r, ProcessResult&& res,
                                              const SourceRecord& src, const std::string& tokenizer, bool waited,
                                              std::int64_t cpu_ns);
  // max_decodes = 0: runs the generation to its end on this thread; true when a record was published.
  bool generate_waited(ReceivedBatch& b, std::size_t i, ports::Record r, ProcessResult&& res, const SourceRecord& src,
                       const std::string& tokenizer, std::int64_t cpu_ns);
  // max_decodes > 0: waits for room, then starts the generation; its end settles the item.
  void start_generation(ReceivedBatch& b, std::size_t i, ports::Record r, ProcessResult&& res, const SourceRecord& src,
                        const std::string& tokenizer, std::int64_t cpu_ns);
  // The end of a generation on either schedule: its record (the decode stamps filled) published,
  // or its dead letter and refusal. True when a record was published.
  bool finish_generation(Generation& g, Ending e);
  // An asynchronous generation's end, on the decoder's (or the retry) thread.
  void generation_ended(std::shared_ptr<Generation> g, Ending e);
  void retry_loop();
  void release_generation();

  void on_published(std::uintptr_t token, bool ok, std::int64_t acked_ns) override;
  void dead_letter_item(ReceivedBatch& b, std::size_t i, const std::string& kind, const std::string& reason,
                        const std::string& tokenizer);
  // The id the item's refusal is answered under (empty: none). Reads the address of a body that
  // did not decode; never throws.
  std::string answerable_id(const SourceEntry& e, const SourceRecord* src);
  void refuse(const std::string& id, const std::string& kind, const std::string& reason);
  void hook(WorkerStage stage) const;

  Source& source_;
  const Processor& processor_;
  DeadLetterSink& dead_letters_;
  const WorkerOptions& options_;
  BatchLoop& loop_;
  std::unique_ptr<Publisher> publisher_;
  std::int64_t wall_offset_ns_ = 0;  // wall = monotonic + offset, fixed at start (one clock read per stamp)
  std::shared_ptr<EngineShare> engine_share_;  // with a pricer: the generations' shares of the engine's time

  // Asynchronous generations started and not ended; retries waiting for their backoff, run by
  // retry_thread_.
  std::mutex decode_mutex_;
  std::condition_variable decode_cv_;
  std::size_t generations_ = 0;
  std::deque<std::shared_ptr<Generation>> retries_;
  bool retry_stop_ = false;
  std::thread retry_thread_;
  std::string attempt_prefix_;  // unique per worker: "<name>-<random>-"
  std::string decoder_kind_;    // what its answers say decoded them: "openai", "sim", "none"
  std::atomic<std::uint64_t> attempts_{0};

  std::int64_t next_seq_ = 0;
  std::atomic<std::uint64_t> items_{0}, ok_{0}, bad_{0}, publish_failed_{0}, prompt_token_mismatches_{0};
};

}  // namespace overhead::pipe
