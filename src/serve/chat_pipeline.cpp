#include "serve/chat_pipeline.hpp"

#include <cstdio>
#include <exception>
#include <span>
#include <stdexcept>

#include "pipe/clock.hpp"
#include "pipe/consumer.hpp"
#include "pipe/errors.hpp"
#include "pipe/worker.hpp"
#include "serve/completion_json.hpp"

namespace overhead::serve {
namespace {

// The workers' receive wait: short enough that a stop is seen quickly, long enough that an idle
// gateway does not spin.
constexpr std::chrono::milliseconds kReceiveWait{200};
// A gateway's worker never stops for lack of input; only stop() ends it.
constexpr std::chrono::hours kNeverIdle{24 * 365};

std::unique_ptr<QueueReplies> make_queue_replies(const PipelineBackends& b) {
  if (!b.replies) return nullptr;
  if (!b.open_reply_queue || !b.is_reply_queue || b.reply_name.empty())
    throw std::invalid_argument("a reply queue needs its name, an opener and a check for the workers");
  return std::make_unique<QueueReplies>(b.open_reply_queue, b.is_reply_queue);
}

}  // namespace

ChatPipeline::ChatPipeline(PipelineBackends backends, PipelineOptions options, ReplyPath& replies)
    : backends_(std::move(backends)),
      options_(std::move(options)),
      dead_letters_(options_.dead_letter_path),
      // Without in-process workers nothing here renders, so no tokenizer is loaded.
      processor_(options_.workers == 0 ? std::vector<std::string>{} : options_.tokenizers),
      queue_replies_(make_queue_replies(backends_)),
      worker_replies_(queue_replies_ ? static_cast<ReplyPath&>(*queue_replies_) : replies),
      replying_processor_(processor_, worker_replies_),
      log_sink_(backends_.log),
      replying_sink_(log_sink_, worker_replies_) {
  if (options_.workers == 0 && !backends_.replies)
    throw std::invalid_argument("a gateway without workers of its own needs a reply queue (a shared input queue)");
  fingerprint_ = decoder_fingerprint(options_.decoder ? options_.decoder->describe() : "none");
  if (backends_.replies) receiver_ = std::make_unique<ReplyReceiver>(backends_.replies, replies);
  source_ = std::make_unique<pipe::QueueSource>(backends_.input, kReceiveWait, kNeverIdle, &stop_workers_);
  for (unsigned i = 0; i < options_.workers; ++i) {
    workers_.emplace_back([this, i, &replies = worker_replies_] {
      pipe::WorkerOptions wo;
      wo.name = "serve-worker-" + std::to_string(i);
      wo.experiment = options_.experiment;
      wo.visibility = backends_.input->visibility_timeout();
      wo.decoder = options_.decoder;
      wo.decode_failed = [&replies](const pipe::SourceRecord& source, const pipe::ItemError& e) {
        replies.deliver(Reply{source.id, false, {}, e.kind(), e.what()});
      };
      try {
        pipe::Worker worker(*source_, replying_processor_, replying_sink_, dead_letters_, wo);
        (void)worker.run();
      } catch (const std::exception& e) {
        // The worker stops only on a failure of its queue; the gateway keeps answering (requests
        // then time out), and the cause is on stderr rather than lost.
        std::fprintf(stderr, "overhead serve: %s stopped: %s\n", wo.name.c_str(), e.what());
      }
    });
  }
  if (options_.workers == 0) return;  // the consumers run elsewhere too
  consumer_ = std::thread([this] {
    pipe::ConsumerOptions co;
    co.wait = kReceiveWait;
    co.idle_exit = std::chrono::milliseconds(0);
    co.drain = &drain_consumer_;
    try {
      pipe::Consumer consumer(backends_.log, *backends_.store, dead_letters_, co);
      (void)consumer.run();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "overhead serve: consumer stopped: %s\n", e.what());
    }
  });
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
  } catch (const pipe::QueueError& e) {
    dead_letters_.add({pipe::kind_name(pipe::DeadLetterKind::send_failed), "request " + source.id, tokenizer, e.what(), body});
    return SubmitFailure{e.failure() == pipe::Failure::permanent, e.what()};
  }
}

std::size_t ChatPipeline::log_backlog() {
  constexpr std::int64_t kRefreshNs = 50'000'000;
  const std::int64_t now = pipe::monotonic_ns();
  if (now - backlog_checked_ns_.load(std::memory_order_relaxed) >= kRefreshNs) {
    std::unique_lock lock(backlog_mutex_, std::try_to_lock);  // one refresher; the others read the last value
    if (lock.owns_lock() && now - backlog_checked_ns_.load() >= kRefreshNs) {
      try {
        const pipe::QueueCounts c = backends_.log->counts();
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
  while (options_.workers > 0 && std::chrono::steady_clock::now() < deadline) {
    try {
      const pipe::QueueCounts c = backends_.input->counts();
      if (c.visible + c.in_flight == 0) break;
    } catch (const std::exception&) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop_workers_ = true;
  for (auto& t : workers_) t.join();
  drain_consumer_ = true;
  if (consumer_.joinable()) consumer_.join();
  // Over a shared queue the replies of items taken by other workers may still arrive until here.
  if (receiver_) receiver_->stop();
}

}  // namespace overhead::serve
