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

#include "cost/request_price.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/engine_share.hpp"
#include "ports/decoder.hpp"
#include "pipe/generation_cancels.hpp"
#include "pipe/processor.hpp"
#include "pipe/publisher.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "reply/reply.hpp"
#include "reply/reply_path.hpp"
#include "pipe/item_stage.hpp"      // the item stage, one half of the worker
#include "pipe/worker_batches.hpp"  // the batch loop, the other

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
  ports::RetryPolicy retry = ports::RetryPolicy::jittered();  // the log publisher's; see retry.hpp
  // The decoder stage after encode and before publish (decoder.hpp); null = none. Its transient
  // failures are retried under `decoder_retry`; an item whose decode still fails is a
  // decode_failed dead letter.
  std::shared_ptr<const ports::Decoder> decoder;
  ports::RetryPolicy decoder_retry = ports::RetryPolicy::jittered();
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
  // for it. 0: the worker's thread starts each generation and waits for its end, one item at a
  // time (a batch run's exact timing), answering whole.
  std::size_t max_decodes = 0;
  // Where the generations started through Decoder::start (max_decodes > 0) are registered by
  // request id, so an in-process gateway can cancel one (generation_cancels.hpp); null = nowhere.
  GenerationCancels* cancels = nullptr;
  // Keep the generated text in the record (`--store-text`); by default only its finish reason.
  bool store_text = false;
  // Prices every record (cost_usd, its parts E and D, price_source: cost/request_price.hpp) from
  // what the item used: its CPU time on the worker's threads and its tokens or its share of the
  // engine's time. Null: no price given, the cost fields stay 0. `engine_share` divides the
  // engine's time among the generations in flight at once; the workers of one process share it
  // (null: each worker keeps its own).
  std::shared_ptr<const cost::RequestPricer> pricer;
  std::shared_ptr<EngineShare> engine_share;
  // How an answer's tool calls and reasoning are counted for the record (Record::tool_calls,
  // reasoning_tokens): unset, the item's template's parsers; `--tool-parser`, `--reasoning-parser`.
  AnswerParsers answer_parsers;
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
  // Answers whose engine read another number of prompt tokens than we sent: the engine's
  // tokenizer is not the item's (Record::prompt_tokens_mismatch).
  std::uint64_t prompt_token_mismatches = 0;
  std::uint64_t batches = 0;
  std::uint64_t delete_failures = 0;  // inputs not deleted (stale receipt or a failing queue): they come back
  std::int64_t elapsed_ns = 0;
  std::int64_t cpu_ns = 0;  // CPU time of the thread that ran run() (not the prefetch or publisher threads)
  PublisherStats publisher;
};

// The composition of the two halves: the batch loop (worker_batches.hpp: receive, settle,
// extend, stamp patches, the prefetch threads) and the item stage (item_stage.hpp: parse,
// render and encode, generation, record, publish, answers).
class Worker final {
 public:
  Worker(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead_letters,
         WorkerOptions options);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Runs until the source is finished and every record is settled. Rethrows WorkerCrash.
  WorkerStats run();

 private:
  const WorkerOptions options_;  // normalized (worker.cpp); both halves read it
  BatchLoop loop_;
  ItemStage items_;
};

}  // namespace overhead::pipe
