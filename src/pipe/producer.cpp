#include "pipe/producer.hpp"

#include <algorithm>

#include "ports/clock.hpp"

namespace overhead::pipe {

using ports::call_with_retries;
using ports::Failure;
using ports::kMaxQueueBatch;
using ports::monotonic_ns;
using ports::Queue;
using ports::QueueError;
using ports::RetryOutcome;
using ports::RetryPolicy;
using ports::SendOutcome;

ProducerStats produce(const std::vector<std::shared_ptr<const SourceRecord>>& records,
                      const std::vector<std::string>& tokenizers, Queue& queue, std::size_t batch,
                      DeadLetterSink* dead_letters, const RetryPolicy& retry, bool with_answers) {
  batch = std::clamp<std::size_t>(batch, 1, kMaxQueueBatch);
  ProducerStats stats;
  const std::int64_t start = monotonic_ns();
  std::vector<std::string> bodies, origins, item_tokenizers;
  bodies.reserve(batch);
  auto refuse = [&](DeadLetterKind kind, std::size_t i, const std::string& why) {
    if (!dead_letters) throw QueueError(queue.url() + ": " + origins[i] + " not sent: " + why);
    dead_letters->add(DeadLetter{kind_name(kind), origins[i], item_tokenizers[i], queue.url() + ": " + why, bodies[i]});
    ++stats.failed;
  };
  auto flush = [&] {
    if (bodies.empty()) return;
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      // Checked here rather than left to the queue, so the dead letter says what is too large.
      if (bodies[i].size() > queue.max_message_bytes())
        refuse(DeadLetterKind::prompt_too_large, i, "work item of " + std::to_string(bodies[i].size()) +
                                          " bytes exceeds the queue's message limit of " +
                                          std::to_string(queue.max_message_bytes()));
      else todo.push_back(i);
    }
    // Resend only the entries that failed retryably; the whole call has its own retries.
    for (int attempt = 1; !todo.empty(); ++attempt) {
      std::vector<std::string> part;
      for (auto i : todo) part.push_back(bodies[i]);
      std::vector<SendOutcome> outcomes;
      const RetryOutcome o = call_with_retries(retry, [&] { outcomes = queue.send_batch(part); }, [] {});
      if (!o.ok) throw QueueError(o.last_error, o.permanent ? Failure::permanent : Failure::transient);
      std::vector<std::size_t> again;
      for (std::size_t k = 0; k < outcomes.size(); ++k) {
        if (outcomes[k].ok()) ++stats.messages;
        else if (outcomes[k].failure->retryable && attempt < retry.attempts) again.push_back(todo[k]);
        else refuse(DeadLetterKind::send_failed, todo[k], outcomes[k].failure->message);
      }
      if (!again.empty()) retry.wait(attempt);
      todo = std::move(again);
    }
    ++stats.batches;
    bodies.clear();
    origins.clear();
    item_tokenizers.clear();
  };
  for (const auto& tokenizer : tokenizers) {
    for (const auto& rec : records) {
      bodies.push_back(encode_item_body(*rec, tokenizer, with_answers));
      origins.push_back(source_origin(*rec));
      item_tokenizers.push_back(tokenizer);
      if (bodies.size() == batch) flush();
    }
  }
  flush();
  stats.elapsed_ns = monotonic_ns() - start;
  return stats;
}

}  // namespace overhead::pipe
