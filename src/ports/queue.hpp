// The message queue between the stages (a port), with SQS semantics:
//   - send a batch of at most 10 bodies, each at most max_message_bytes(), the batch at most
//     kMaxBatchBytes; each entry succeeds or fails on its own (SendMessageBatch);
//   - receive up to 10, waiting up to `wait` when none is visible (long polling);
//   - every received message carries a receipt handle and stays invisible for the visibility
//     timeout; when that passes without a delete it is delivered again, with a new receipt, and
//     the old receipt stops working;
//   - delete a batch by receipt (per-entry failures are reported, as DeleteMessageBatch does);
//   - extend (or shorten) the visibility of a batch of received messages
//     (ChangeMessageVisibilityBatch);
//   - a message already received `max_receives` times is moved to the dead-letter queue instead
//     of being delivered again (SQS's redrive policy, maxReceiveCount).
//
// Why the interface is shaped this way: every operation maps one-to-one onto SQS
// (SendMessageBatch, ReceiveMessage with WaitTimeSeconds, DeleteMessageBatch,
// ChangeMessageVisibilityBatch, redrive policy) and onto Redis Streams with a consumer group
// (XADD pipelined; XREADGROUP COUNT/BLOCK plus XAUTOCLAIM of entries idle longer than the
// visibility timeout; receipt = entry id + delivery count; XACK+XDEL; XCLAIM to the same consumer
// resets the idle time; XPENDING's delivery counter > max moves the entry to a -dlq stream). No
// operation needs more than these backends give, so they fit unchanged.
//
// Contract every backend keeps (tests/pipe/queue_contract.hpp checks it):
//   - Thread-safety: every member may be called from several threads at once on one object. The
//     worker, its prefetch threads (receive, settle) and the publisher pool share one Queue.
//   - Deadlines: no call blocks longer than the backend's per-call timeout (the URL parameter
//     `timeout_ms`, default kDefaultCallTimeout) plus, for receive, its `wait`. A call that runs
//     out of time throws QueueError with Failure::transient.
//   - Errors: a failure of the whole call throws QueueError, transient or permanent (errors.hpp);
//     a failure of one entry of a batch is reported in the result and leaves the others done.
//   - url() is the URL with any password replaced by "***" (BackendUrl::redacted).
//
// The adapters live in src/backends/ and are opened by URL there (backends/open.hpp); the
// pipeline receives an opened Queue and never names a backend.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ports/backend_url.hpp"  // kDefaultCallTimeout
#include "ports/clock.hpp"
#include "ports/errors.hpp"

namespace overhead::ports {

// The most messages one send, receive, delete or visibility call takes (SQS's limit).
inline constexpr std::size_t kMaxQueueBatch = 10;
// The bounds of the queue parameters visibility_ms and max_receives, as SQS bounds them (12 h, a
// maxReceiveCount of at most 1000; 0 receives = no dead-letter queue).
inline constexpr std::int64_t kMaxVisibilityMs = 12LL * 3600 * 1000;
inline constexpr std::int64_t kMaxReceivesBound = 1000;
// max_message_bytes: at least 1 (a negative value must not wrap around), at most 1 GiB.
inline constexpr std::int64_t kMaxMessageBytesBound = std::int64_t{1} << 30;
// SQS's default message size limit, and the most bytes one send_batch may carry in all.
inline constexpr std::size_t kDefaultMaxMessageBytes = 256 * 1024;
inline constexpr std::size_t kMaxBatchBytes = 1024 * 1024;

struct Message {
  std::string id;       // stable across deliveries
  std::string receipt;  // valid until the message is delivered again or deleted
  std::string body;
  int receive_count = 0;  // deliveries so far, this one included
};

// The outcome of one body of send_batch, in the order given.
struct SendOutcome {
  std::string id;                       // the new message's id; empty when the entry failed
  std::optional<EntryFailure> failure;  // set when this entry was not sent
  [[nodiscard]] bool ok() const { return !failure; }
};

struct QueueCounts {
  std::size_t visible = 0;    // ready to be received
  std::size_t in_flight = 0;  // received, neither deleted nor expired
};

// What an operator watches (`overhead status`): depth, in flight, the dead-letter queue and how
// long the oldest message has waited. Fields a backend cannot tell are empty, never guessed.
struct QueueStatus {
  QueueCounts counts;
  std::optional<QueueCounts> dead_letters;              // empty = no dead-letter queue (max_receives 0)
  std::optional<std::chrono::milliseconds> oldest_age;  // oldest message not yet deleted; empty = none or unknown
  std::optional<std::size_t> consumers;                 // readers the broker knows of; empty = unknown
};

class Queue {
 public:
  virtual ~Queue() = default;

  // Sends 1..10 bodies; returns one outcome per body, in order. A body larger than
  // max_message_bytes() fails on its own (not retryable); the others are sent. Throws QueueError
  // (permanent) when the batch is empty, larger than 10 or larger than kMaxBatchBytes in all,
  // and QueueError when the backend fails as a whole.
  [[nodiscard]] virtual std::vector<SendOutcome> send_batch(std::span<const std::string> bodies) = 0;
  // Receives up to `max` (1..10) messages. When none is visible, waits up to `wait` for one.
  // An empty result means nothing arrived in time.
  [[nodiscard]] virtual std::vector<Message> receive(std::size_t max, std::chrono::milliseconds wait) = 0;
  // Deletes up to 10 messages by receipt. Returns the receipts that were not deleted because
  // they are stale (the message was delivered again since) or unknown.
  [[nodiscard]] virtual std::vector<std::string> delete_batch(std::span<const std::string> receipts) = 0;
  // Makes up to 10 received messages invisible for `timeout` from now. Returns the receipts
  // that are stale or no longer in flight (those messages are unchanged).
  [[nodiscard]] virtual std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts,
                                                                         std::chrono::milliseconds timeout) = 0;
  // Approximate counts, as SQS's ApproximateNumberOfMessages(NotVisible).
  [[nodiscard]] virtual QueueCounts counts() = 0;
  // The dead-letter queue, or nullptr when max_receives is 0 (no redrive).
  [[nodiscard]] virtual std::shared_ptr<Queue> dead_letter_queue() = 0;
  // Copies one received message to the dead-letter queue with the reason it cannot be used (bad
  // input: any other delivery would fail the same way), so the operator finds it where the
  // redrive policy puts the rest. The caller still deletes it by receipt. Returns false when there
  // is no dead-letter queue (max_receives 0). The default sends the body alone; a backend that can
  // keep the reason beside the body (Redis: fields of the DLQ entry) overrides it.
  [[nodiscard]] virtual bool send_to_dead_letters(const std::string& receipt, const std::string& body,
                                                  const std::string& reason);
  // counts() and the dead-letter queue's counts(); a backend that knows more (the oldest
  // message's age, its consumers) overrides this.
  [[nodiscard]] virtual QueueStatus status();
  [[nodiscard]] virtual std::chrono::milliseconds visibility_timeout() const = 0;
  // The largest body send_batch accepts.
  [[nodiscard]] virtual std::size_t max_message_bytes() const { return kDefaultMaxMessageBytes; }
  [[nodiscard]] virtual const std::string& url() const = 0;

  // One receipt: false when it is stale or the message is no longer in flight.
  [[nodiscard]] bool change_visibility(const std::string& receipt, std::chrono::milliseconds timeout) {
    return change_visibility_batch(std::span<const std::string>(&receipt, 1), timeout).empty();
  }
};

// Sends any number of bodies in batches of at most 10. Throws QueueError naming the first entry
// that failed (after the whole of that batch was tried).
void send_all(Queue& queue, std::span<const std::string> bodies);

// The checks every send_batch makes before sending: 1..10 bodies, at most kMaxBatchBytes in all
// (throws QueueError, permanent, naming `url`); returns, per body, the failure of a body larger
// than `max_message_bytes` (others empty). For adapters.
[[nodiscard]] std::vector<std::optional<EntryFailure>> check_send_batch(std::span<const std::string> bodies,
                                                                        std::size_t max_message_bytes,
                                                                        const std::string& url);

}  // namespace overhead::ports
