// The pipeline behind POST /v1/chat/completions on the embedded default: the gateway sends each
// request as a work item onto the input queue; in-process workers (the one worker host,
// pipe/worker_host.hpp, over a QueueSource) render and encode it and publish its record to the
// log queue; an in-process consumer (pipe::Consumer) stores it. The worker's answer comes back
// through the reply path (reply/reply_path.hpp) to the ReplyBox. The queues and the store are opened
// by the caller (any URL backends::open_* accepts), so the same code runs over mem:, sqlite-queue:,
// Redis or SQS, with the worker in this process.
#pragma once

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipe/dead_letter.hpp"
#include "ports/decoder.hpp"
#include "ports/queue.hpp"
#include "ports/queue_family.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "ports/store.hpp"
#include "pipe/work_item.hpp"
#include "pipe/consumer_host.hpp"
#include "pipe/generation_cancels.hpp"
#include "pipe/worker_host.hpp"
#include "reply/queue_replies.hpp"
#include "reply/reply_path.hpp"
#include "reply/remote_cancels.hpp"
#include "reply/reply_receiver.hpp"

namespace overhead::serve {

struct PipelineBackends {
  std::shared_ptr<ports::Queue> input;  // work items
  std::shared_ptr<ports::Queue> log;    // records, from the workers to the consumer
  std::shared_ptr<ports::Store> store;  // the in-process consumer's; null in a gateway without workers
  // Over a shared queue: this gateway's reply queue (a sibling of `input`, named `reply_name`),
  // which every work item names, so that any worker on the broker answers here. Null: the
  // workers are in this process and answer the box directly.
  std::shared_ptr<ports::Queue> replies;
  std::string reply_name;
  // The input queue's family (with a reply queue only): the in-process workers open the reply
  // queue an item names there, and the gateway a remote worker's control queue to cancel a
  // generation (reply/remote_cancels.hpp).
  std::shared_ptr<const ports::QueueFamily> family;
  // The batch lane (the Batch API's items, pipe/lane_source.hpp): the in-process workers read it
  // beside `input`, interactive items first. Null: they read `input` alone.
  std::shared_ptr<ports::Queue> batch_lane;
};

// Why a work item was not sent.
struct SubmitFailure {
  bool permanent = false;  // the item itself was refused (too large); else the queue failed
  std::string reason;
};

class ChatPipeline {
 public:
  // Loads the tokenizers and starts the workers and the consumer (none with workers.threads 0),
  // and the reply receiver over a shared queue. `workers`: the in-process workers' settings
  // (serve::ServerOptions::workers; their tokenizers loaded at start); what answers, cancels and
  // abandons is set here. `dead_letter_path` empty: dead letters are counted in memory only.
  ChatPipeline(PipelineBackends backends, pipe::WorkerHostOptions workers, const std::string& dead_letter_path,
               reply::ReplyPath& replies);
  ~ChatPipeline();
  ChatPipeline(const ChatPipeline&) = delete;
  ChatPipeline& operator=(const ChatPipeline&) = delete;

  // Sends one item (the pipeline's queue body, pipe::encode_item_body). Empty when sent.
  [[nodiscard]] std::optional<SubmitFailure> submit(const pipe::SourceRecord& source, const std::string& tokenizer);
  // Lets the workers take what is queued until `deadline`, then stops them and drains the
  // consumer, so every record a worker published is stored (the drain gets a few seconds past the
  // deadline; what is left then is counted on stderr). Idempotent.
  void stop(std::chrono::steady_clock::time_point deadline);
  // A shutdown past its deadline: the workers take nothing more up (what they received and did
  // not start is left on the queue, WorkerOptions::abandon) and finish what they hold, waited for
  // until `until`. Returns whether they finished. The requests not answered by then get 503.
  bool stop_taking(std::chrono::steady_clock::time_point until);
  // The client of request `id` went away, or its --request-timeout passed: its generation is
  // cancelled (the engine's request closed, its record's finish_reason "cancelled"), now or as it
  // starts: an in-process worker's directly, a remote worker's through its control queue.
  void cancel(const std::string& id) {
    if (workers_count_ > 0) cancels_.cancel(id);
    if (remote_cancels_) remote_cancels_->cancel(id);
  }
  // Whether the input queue is shared with other workers (a reply queue is used): an item this
  // gateway gave up on may still be processed elsewhere.
  [[nodiscard]] bool shared() const { return backends_.replies != nullptr; }

  [[nodiscard]] const pipe::DeadLetterSink& dead_letters() const { return dead_letters_; }
  [[nodiscard]] ports::QueueCounts input_counts() { return backends_.input->counts(); }
  // The batch lane (null without one): where the Batch API's items are sent.
  [[nodiscard]] const std::shared_ptr<ports::Queue>& batch_lane() const { return backends_.batch_lane; }
  [[nodiscard]] ports::QueueCounts log_counts() { return backends_.log->counts(); }
  // Records on the log queue not yet stored (visible + in flight), read from the queue at most
  // every 50 ms and cached in between: a request's admission must not cost a broker round trip.
  // Unknown (the queue failed to tell) counts as 0.
  [[nodiscard]] std::size_t log_backlog();
  [[nodiscard]] const std::map<std::string, std::string>& load_errors() const { return host_->load_errors(); }
  // The completions' system_fingerprint: names the in-process workers' decoder
  // ("overhead-decoder-none"); empty (unknown) in a gateway without workers of its own.
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }

 private:
  PipelineBackends backends_;
  unsigned workers_count_;  // in-process workers (0: they run elsewhere)
  std::string fingerprint_;
  pipe::DeadLetterSink dead_letters_;
  // Set first at a shutdown: the source stops receiving and the workers leave what they did not
  // take up (declared before the host, which holds its address).
  std::atomic<bool> stop_workers_{false};
  pipe::GenerationCancels cancels_;  // the in-process workers' generations (declared before the host)
  // Over a shared queue the in-process workers answer through the reply queue like any other
  // worker; else they answer the box.
  std::unique_ptr<pipe::WorkerHost> host_;
  pipe::QueueSink log_sink_;
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  bool workers_done_ = false;
  std::unique_ptr<pipe::Source> source_;  // the input queue, or it and the batch lane
  std::thread workers_;
  std::unique_ptr<pipe::ConsumerHost> consumer_;  // the in-process consumer (with workers only)
  std::unique_ptr<reply::RemoteCancels> remote_cancels_;  // over a shared queue; outlives the receiver
  std::unique_ptr<reply::ReplyReceiver> receiver_;
  bool stopped_ = false;
  std::mutex backlog_mutex_;
  std::atomic<std::int64_t> backlog_checked_ns_{0};
  std::atomic<std::size_t> backlog_{0};
};

}  // namespace overhead::serve
