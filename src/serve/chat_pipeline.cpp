#include "serve/chat_pipeline.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <span>
#include <stdexcept>

#include "ports/clock.hpp"
#include "pipe/consumer_host.hpp"
#include "pipe/lane_source.hpp"
#include "ports/errors.hpp"
#include "serve/completion_json.hpp"

namespace overhead::serve {
namespace {

// The workers' receive wait: short enough that a stop is seen quickly, long enough that an idle
// gateway does not spin.
constexpr std::chrono::milliseconds kReceiveWait{200};
// A gateway's worker never stops for lack of input; only stop() ends it.
constexpr std::chrono::hours kNeverIdle{24 * 365};
// How long past the shutdown deadline the consumer may take to store the last records.
constexpr std::chrono::seconds kDrainGrace{5};

pipe::WorkerHostOptions host_options(const PipelineBackends& b, pipe::WorkerHostOptions h, reply::ReplyPath& replies,
                                     const std::atomic<bool>& stop_workers, pipe::GenerationCancels& cancels) {
  // Without in-process workers nothing here renders, so no tokenizer is loaded.
  if (h.threads == 0) h.tokenizers.clear();
  h.worker.visibility = b.input->visibility_timeout();
  h.worker.abandon = &stop_workers;
  h.worker.cancels = &cancels;
  if (!b.replies) {
    h.replies = &replies;
    return h;
  }
  if (!b.family || b.reply_name.empty()) throw std::invalid_argument("a reply queue needs its name and its queue family");
  h.family = b.family;
  return h;
}

}  // namespace

ChatPipeline::ChatPipeline(PipelineBackends backends, pipe::WorkerHostOptions workers, const std::string& dead_letter_path,
                           reply::ReplyPath& replies)
    : backends_(std::move(backends)),
      workers_count_(workers.threads),
      fingerprint_(workers.threads > 0 ? decoder_fingerprint(workers.worker.decoder ? workers.worker.decoder->describe() : "none")
                                       : std::string()),
      dead_letters_(dead_letter_path),
      host_(std::make_unique<pipe::WorkerHost>(host_options(backends_, std::move(workers), replies, stop_workers_, cancels_))),
      log_sink_(backends_.log) {
  if (workers_count_ == 0 && !backends_.replies)
    throw std::invalid_argument("a gateway without workers of its own needs a reply queue (a shared input queue)");
  if (workers_count_ > 0 && !backends_.store) throw std::invalid_argument("a gateway with workers needs a store for their records");
  if (backends_.replies) remote_cancels_ = std::make_unique<reply::RemoteCancels>(backends_.family);
  if (backends_.replies) receiver_ = std::make_unique<reply::ReplyReceiver>(backends_.replies, replies, remote_cancels_.get());
  auto input = std::make_unique<pipe::QueueSource>(backends_.input, kReceiveWait, kNeverIdle, &stop_workers_);
  if (backends_.batch_lane) {
    auto lane = std::make_shared<pipe::QueueSource>(backends_.batch_lane, kReceiveWait, kNeverIdle, &stop_workers_);
    source_ = std::make_unique<pipe::LaneSource>(std::move(input), std::move(lane),
                                                 pipe::lane_rule_for(host_->options().worker.max_decodes, workers_count_));
  } else {
    source_ = std::move(input);
  }
  if (workers_count_ == 0) return;  // the workers and the consumers run elsewhere
  workers_ = std::thread([this] {
    try {
      (void)host_->run(*source_, log_sink_, dead_letters_);
    } catch (const std::exception& e) {
      // A worker stops only on a failure of its queue; the gateway keeps answering (requests
      // then time out), and the cause is on stderr rather than lost.
      std::fprintf(stderr, "overhead serve: a worker stopped: %s\n", e.what());
    }
    std::lock_guard lock(done_mutex_);
    workers_done_ = true;
    done_cv_.notify_all();
  });
  pipe::ConsumerOptions co;
  co.wait = kReceiveWait;
  co.idle_exit = std::chrono::milliseconds(0);
  consumer_ = std::make_unique<pipe::ConsumerHost>(backends_.log, *backends_.store, dead_letters_, co, [](const std::exception& e) {
    std::fprintf(stderr, "overhead serve: consumer stopped: %s\n", e.what());
  });
}

bool ChatPipeline::stop_taking(std::chrono::steady_clock::time_point until) {
  stop_workers_ = true;
  if (workers_count_ == 0) return true;
  std::unique_lock lock(done_mutex_);
  return done_cv_.wait_until(lock, until, [&] { return workers_done_; });
}

ChatPipeline::~ChatPipeline() { stop(std::chrono::steady_clock::now()); }

std::optional<SubmitFailure> ChatPipeline::submit(const pipe::SourceRecord& source, const std::string& tokenizer) {
  const std::string body = pipe::encode_item_body(source, tokenizer, false, backends_.reply_name);
  try {
    auto outcome = backends_.input->send_batch(std::span<const std::string>(&body, 1));
    if (!outcome.empty() && outcome[0].ok()) return std::nullopt;
    const bool retryable = !outcome.empty() && outcome[0].failure->retryable;
    const std::string reason = outcome.empty() ? std::string("no outcome") : outcome[0].failure->message;
    dead_letters_.add({pipe::kind_name(pipe::DeadLetterKind::send_failed), "request " + source.id, tokenizer, reason, body});
    return SubmitFailure{!retryable, reason};
  } catch (const ports::QueueError& e) {
    dead_letters_.add({pipe::kind_name(pipe::DeadLetterKind::send_failed), "request " + source.id, tokenizer, e.what(), body});
    return SubmitFailure{e.failure() == ports::Failure::permanent, e.what()};
  }
}

std::size_t ChatPipeline::log_backlog() {
  constexpr std::int64_t kRefreshNs = 50'000'000;
  const std::int64_t now = ports::monotonic_ns();
  if (now - backlog_checked_ns_.load(std::memory_order_relaxed) >= kRefreshNs) {
    std::unique_lock lock(backlog_mutex_, std::try_to_lock);  // one refresher; the others read the last value
    if (lock.owns_lock() && now - backlog_checked_ns_.load() >= kRefreshNs) {
      try {
        const ports::QueueCounts c = backends_.log->counts();
        backlog_ = c.visible + c.in_flight;
      } catch (const std::exception&) {
        backlog_ = 0;
      }
      backlog_checked_ns_ = now;
    }
  }
  return backlog_.load(std::memory_order_relaxed);
}

void ChatPipeline::stop(std::chrono::steady_clock::time_point deadline) {
  if (stopped_) return;
  stopped_ = true;
  // Items already queued are still answered (asynchronous requests wait for them), up to the
  // deadline. Without workers here the input queue is other gateways' too: nothing to wait for.
  while (workers_count_ > 0 && std::chrono::steady_clock::now() < deadline) {
    try {
      const ports::QueueCounts c = backends_.input->counts();
      if (c.visible + c.in_flight == 0) break;
    } catch (const std::exception&) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop_workers_ = true;
  if (workers_.joinable()) workers_.join();
  if (consumer_) {
    consumer_->drain();
    // The records the workers published are stored, if the store takes them within a few seconds
    // past the deadline: a store that is down must not hold the exit.
    if (!consumer_->wait_until(std::max(deadline, std::chrono::steady_clock::now()) + kDrainGrace)) {
      consumer_->stop();
      std::size_t left = 0;
      try {
        const ports::QueueCounts c = backends_.log->counts();
        left = c.visible + c.in_flight;
      } catch (const std::exception&) {
      }
      std::fprintf(stderr, "overhead serve: the store did not take the last records in time; about %zu left on %s\n", left,
                   backends_.log->url().c_str());
    }
    (void)consumer_->join();
  }
  // Over a shared queue the replies of items taken by other workers may still arrive until here.
  if (receiver_) receiver_->stop();
}

}  // namespace overhead::serve
