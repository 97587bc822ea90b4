// The pipeline behind POST /v1/chat/completions on the embedded default: the gateway sends each
// request as a work item onto the input queue; in-process workers (pipe::Worker over a
// QueueSource, the real ChatTokenProcessor) render and encode it and publish its record to the
// log queue; an in-process consumer (pipe::Consumer) stores it. The worker's outcome comes back
// through the reply taps (reply_taps.hpp) to the ReplyBox. The queues and the store are opened
// by the caller (any URL backends::open_* accepts), so the same code runs over mem:, sqlite-queue:,
// Redis or SQS, with the worker in this process.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipe/chat_token_processor.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/decoder.hpp"
#include "pipe/queue.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "pipe/store.hpp"
#include "pipe/work_item.hpp"
#include "serve/queue_replies.hpp"
#include "serve/reply_box.hpp"
#include "serve/reply_receiver.hpp"
#include "serve/reply_taps.hpp"

namespace overhead::serve {

struct PipelineBackends {
  std::shared_ptr<pipe::Queue> input;  // work items
  std::shared_ptr<pipe::Queue> log;    // records, from the workers to the consumer
  std::shared_ptr<pipe::Store> store;
  // Over a shared queue: this gateway's reply queue (a sibling of `input`, named `reply_name`),
  // which every work item names, so that any worker on the broker answers here. Null: the
  // workers are in this process and answer the box directly.
  std::shared_ptr<pipe::Queue> replies;
  std::string reply_name;
  // How the in-process workers open the reply queue an item names (over a shared queue only).
  QueueReplies::OpenQueue open_reply_queue;
  QueueReplies::IsReplyQueue is_reply_queue;
};

struct PipelineOptions {
  std::vector<std::string> tokenizers;  // loaded by the workers at start
  // In-process workers; each also runs with the consumer. 0 (only with a reply queue): workers
  // and consumers run elsewhere (`overhead worker`, `overhead consume` on the same broker).
  unsigned workers = 1;
  std::string experiment = "serve";     // records are keyed "<experiment>#<tokenizer>"
  std::string dead_letter_path;         // empty: counted in memory only
  // The workers' decoder stage (pipe/decoder.hpp, `--decoder`); null = none.
  std::shared_ptr<const pipe::Decoder> decoder;
};

// Why a work item was not sent.
struct SubmitFailure {
  bool permanent = false;  // the item itself was refused (too large); else the queue failed
  std::string reason;
};

class ChatPipeline {
 public:
  // Loads the tokenizers and starts the workers and the consumer (none with 0 workers), and the
  // reply receiver over a shared queue.
  ChatPipeline(PipelineBackends backends, PipelineOptions options, ReplyPath& replies);
  ~ChatPipeline();
  ChatPipeline(const ChatPipeline&) = delete;
  ChatPipeline& operator=(const ChatPipeline&) = delete;

  // Sends one item (the pipeline's queue body, pipe::encode_item_body). Empty when sent.
  [[nodiscard]] std::optional<SubmitFailure> submit(const pipe::SourceRecord& source, const std::string& tokenizer);
  // Lets the workers take what is queued until `deadline`, then stops them and drains the
  // consumer, so every record a worker published is stored. Idempotent.
  void stop(std::chrono::steady_clock::time_point deadline);

  [[nodiscard]] const pipe::DeadLetterSink& dead_letters() const { return dead_letters_; }
  [[nodiscard]] pipe::QueueCounts input_counts() { return backends_.input->counts(); }
  [[nodiscard]] pipe::QueueCounts log_counts() { return backends_.log->counts(); }
  // Records on the log queue not yet stored (visible + in flight), read from the queue at most
  // every 50 ms and cached in between: a request's admission must not cost a broker round trip.
  // Unknown (the queue failed to tell) counts as 0.
  [[nodiscard]] std::size_t log_backlog();
  [[nodiscard]] const std::map<std::string, std::string>& load_errors() const { return processor_.load_errors(); }
  // The completions' system_fingerprint: names the decoder ("overhead-decoder-none").
  [[nodiscard]] const std::string& fingerprint() const { return fingerprint_; }

 private:
  PipelineBackends backends_;
  PipelineOptions options_;
  std::string fingerprint_;
  pipe::DeadLetterSink dead_letters_;
  pipe::ChatTokenProcessor processor_;
  // Over a shared queue the in-process workers answer through the reply queue like any other
  // worker; else they answer the box. Declared before the taps that hold the chosen path.
  std::unique_ptr<QueueReplies> queue_replies_;
  ReplyPath& worker_replies_;
  ReplyingProcessor replying_processor_;
  pipe::QueueSink log_sink_;
  ReplyingSink replying_sink_;
  std::atomic<bool> stop_workers_{false};
  std::atomic<bool> drain_consumer_{false};
  std::unique_ptr<pipe::QueueSource> source_;
  std::vector<std::thread> workers_;
  std::thread consumer_;
  std::unique_ptr<ReplyReceiver> receiver_;
  bool stopped_ = false;
  std::mutex backlog_mutex_;
  std::atomic<std::int64_t> backlog_checked_ns_{0};
  std::atomic<std::size_t> backlog_{0};
};

}  // namespace overhead::serve
