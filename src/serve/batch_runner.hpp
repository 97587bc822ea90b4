// The Batch API's engine room: creates, cancels and drives batches to their end, from their state
// in the batch store (ports/batch_store.hpp), so a gateway killed at any point and started again on
// the same store resumes every open batch where its state says.
//
// The durable path of a batch:
//   validating   the input file is read line by line from the object store (bounded memory) and
//                every line checked (batch_input.hpp); any error fails the batch with OpenAI's
//                `errors` list and nothing is sent. Else: in_progress, total = the lines.
//   in_progress  the lines are sent to the batch lane as work items naming the batch
//                (SourceRecord::batch), `enqueued` saved every few hundred lines so a restart
//                sends from there (a line sent twice lands on the same record key). A worker
//                stores each item's record with its text under the experiment named by the batch
//                id, keyed by its custom_id: the record store's key makes each line's answer exist
//                exactly once, whoever answered it and however often. The runner counts those
//                records (request_counts) until there is one per line.
//   finalizing   the output and error files are written from the records, one line per custom_id,
//                under ids derived from the batch id (a finalization repeated after a restart
//                rewrites the same objects), then completed.
//   cancelling   (POST .../cancel) what finished is written, then cancelled.
//   expired      at created_at + completion_window: what finished is written, and every other
//                line gets an error line (batch_expired).
//
// Several gateways on one store: each batch is driven by one of them at a time, the holder of its
// lease (Batch::driver, renewed in the batch's document every few seconds while it drives it). A
// runner steps only the batches it holds or whose lease lapsed (`BatchLimits::lease` since the
// last renewal: its gateway died or was cut off), so a batch whose gateway is killed for good is
// finished by another. The store has no compare-and-set: a lapsed lease is taken by writing it and
// reading it back, and two gateways that take it in the same instant both drive it for at most one
// step before the later writer's name stands; what a step does twice lands on the same record keys
// and file ids. A gateway restarted with the same --out on the same host has the same name and takes
// its batches back at once. Within one gateway all state changes go through one mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "ports/batch_store.hpp"
#include "ports/object_store.hpp"
#include "ports/queue.hpp"
#include "ports/store.hpp"
#include "serve/answer_shape.hpp"
#include "serve/batch_input.hpp"
#include "serve/batch_state.hpp"

namespace overhead::serve {

struct BatchLimits {
  std::size_t max_file_bytes = std::size_t{200} << 20;  // an upload's size (OpenAI's: 200 MB)
  std::size_t max_lines = 50000;                          // lines of one batch (OpenAI's: 50,000)
  std::size_t max_open_batches = 16;                      // batches not yet finished, per store
  // Items in the batch lane (waiting, or taken by a worker and not yet answered) past which no
  // more lines are sent until the workers answer some (checked every 200 lines): a batch of any
  // size holds at most about this many items in the lane (in the gateway's memory on mem:), and
  // request_counts moves while a large batch is still being sent.
  std::size_t lane_window = 4000;
  BatchLineLimits lines;
  // How often open batches' records are counted (a scan of the batch's records: kept rare, it
  // costs the gateway CPU that interactive requests want).
  std::chrono::milliseconds poll_interval{1000};
  // How long a batch's lease holds without renewal before another gateway may take the batch.
  std::chrono::seconds lease{10};
  // The answers' parsers (serve --tool-parser, --reasoning-parser): a batch's output lines read
  // their text into content, reasoning and tool calls as the chat route's answers do.
  ParserOverrides parsers;
};

struct BatchBackends {
  std::shared_ptr<ports::ObjectStore> files;   // the uploads and the output files
  std::shared_ptr<ports::BatchStore> state;    // the files' and batches' documents
  std::shared_ptr<ports::Store> records;       // where the workers' records of batch items land
  std::shared_ptr<ports::Queue> lane;          // the batch lane
  // Whether the lane outlives this process (a broker, a shared file). An in-process lane (mem:)
  // loses its items with the process: a runner started again sends the lines of its open batches
  // that have no record yet once more.
  bool lane_durable = true;
  // This gateway's name among those sharing the store (batch leases); empty: a random one.
  std::string driver;
};

class BatchRunner {
 public:
  BatchRunner(BatchBackends backends, BindingCache& bindings, BatchLimits limits);
  ~BatchRunner();
  BatchRunner(const BatchRunner&) = delete;
  BatchRunner& operator=(const BatchRunner&) = delete;

  // Stores a file uploaded under the API key `owner` (empty: no keys); returns its document.
  BatchFile add_file(const std::string& filename, const std::string& purpose, std::string_view content, const std::string& owner = {});
  // The same for a file written in pieces by `fill` (an upload's parts put together), which
  // returns how many bytes it wrote; the file's document is stored once its object is whole.
  BatchFile add_file(const std::string& filename, const std::string& purpose, const std::string& owner,
                     const std::function<std::int64_t(ports::ObjectWriter&)>& fill);
  // A new batch in `validating` (the runner takes it up at once), of the API key `owner` whose
  // lines may name only `owner_models` (empty: any). The input file must be the owner's. Throws
  // RequestError.
  Batch create(const std::string& input_file_id, const std::string& endpoint, const std::string& window,
               const nlohmann::ordered_json& metadata, const std::string& owner = {},
               const std::vector<std::string>& owner_models = {});
  // Moves an open batch to cancelling; empty when there is no such batch. Throws RequestError when
  // it is already finished.
  std::optional<Batch> cancel(const std::string& id);
  [[nodiscard]] std::optional<Batch> get(const std::string& id);
  [[nodiscard]] ports::BatchStore& state() { return *b_.state; }
  [[nodiscard]] ports::ObjectStore& files() { return *b_.files; }
  // Lines this runner sent to the batch lane (for /metrics: with several gateways on one store,
  // their sum is the lines of the batches, each sent once but for restarts and lapsed leases).
  [[nodiscard]] std::uint64_t lines_sent() const { return lines_sent_.load(); }
  [[nodiscard]] const std::string& driver() const { return b_.driver; }
  [[nodiscard]] const BatchLimits& limits() const { return limits_; }

 private:
  void run();
  void step(const std::string& id);
  void validate(Batch b);
  // Sends the lines from `b.enqueued` on; with `answered`, every line whose custom_id is not in it.
  void enqueue(Batch b, const std::unordered_set<std::string>* answered = nullptr);
  void count(Batch b);
  // Whether this runner drives `b` now: it holds the lease (renewed when due) or took it.
  bool hold(Batch& b);
  // Writes the output and error files from the records; with `expire_rest`, an error line for
  // every line without a record. Returns the batch with its file ids and counts.
  Batch write_results(Batch b, const char* rest_code);
  // Saves `b` unless its stored status moved on meanwhile (a cancel) or another gateway took its
  // lease; returns the stored batch.
  Batch save_unless_moved(const Batch& b, BatchStatus expected);
  void save(const Batch& b);

  BatchBackends b_;
  BindingCache& bindings_;
  BatchLimits limits_;
  std::atomic<std::uint64_t> lines_sent_{0};
  AnswerShapes shapes_;
  std::mutex mutex_;  // every read-modify-write of a batch document
  std::mutex wake_mutex_;
  std::condition_variable wake_cv_;
  std::unordered_set<std::string> resend_;  // open batches whose lane items died with the last process
  bool stop_ = false;
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace overhead::serve
