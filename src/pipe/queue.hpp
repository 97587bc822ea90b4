// The message queue between the stages, with SQS semantics:
//   - send a batch of at most 10 bodies;
//   - receive up to 10, waiting up to `wait` when none is visible (long polling);
//   - every received message carries a receipt handle and stays invisible for the visibility
//     timeout; when that passes without a delete it is delivered again, with a new receipt, and
//     the old receipt stops working;
//   - delete a batch by receipt (per-entry failures are reported, as DeleteMessageBatch does);
//   - extend (or shorten) the visibility of a received message;
//   - a message already received `max_receives` times is moved to the dead-letter queue instead
//     of being delivered again (SQS's redrive policy, maxReceiveCount).
//
// Why the interface is shaped this way: every operation maps one-to-one onto SQS
// (SendMessageBatch, ReceiveMessage with WaitTimeSeconds, DeleteMessageBatch,
// ChangeMessageVisibility, redrive policy) and onto Redis Streams with a consumer group
// (XADD pipelined; XREADGROUP COUNT/BLOCK plus XAUTOCLAIM of entries idle longer than the
// visibility timeout; receipt = entry id + delivery count; XACK+XDEL; XCLAIM to the same consumer
// resets the idle time; XPENDING's delivery counter > max moves the entry to a -dlq stream). No
// operation needs more than these backends give, so they fit unchanged.
//
// The adapters live in src/backends/ and are opened by URL there (backends/open.hpp); the
// pipeline receives an opened Queue and never names a backend.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "pipe/clock.hpp"

namespace overhead::pipe {

// The most messages one send, receive or delete call takes (SQS's limit).
inline constexpr std::size_t kMaxQueueBatch = 10;
// The bounds of the queue parameters visibility_ms and max_receives, as SQS bounds them (12 h, a
// maxReceiveCount of at most 1000; 0 receives = no dead-letter queue).
inline constexpr std::int64_t kMaxVisibilityMs = 12LL * 3600 * 1000;
inline constexpr std::int64_t kMaxReceivesBound = 1000;

struct Message {
  std::string id;       // stable across deliveries
  std::string receipt;  // valid until the message is delivered again or deleted
  std::string body;
  int receive_count = 0;  // deliveries so far, this one included
};

struct QueueCounts {
  std::size_t visible = 0;    // ready to be received
  std::size_t in_flight = 0;  // received, neither deleted nor expired
};

class Queue {
 public:
  virtual ~Queue() = default;

  // Sends 1..10 bodies; returns their message ids. Throws QueueError (naming the URL) when the
  // batch is empty or larger than 10, or the backend fails.
  virtual std::vector<std::string> send_batch(std::span<const std::string> bodies) = 0;
  // Receives up to `max` (1..10) messages. When none is visible, waits up to `wait` for one.
  // An empty result means nothing arrived in time.
  virtual std::vector<Message> receive(std::size_t max, std::chrono::milliseconds wait) = 0;
  // Deletes up to 10 messages by receipt. Returns the receipts that were not deleted because
  // they are stale (the message was delivered again since) or unknown.
  virtual std::vector<std::string> delete_batch(std::span<const std::string> receipts) = 0;
  // Makes a received message invisible for `timeout` from now. False when the receipt is stale
  // or the message is no longer in flight.
  virtual bool change_visibility(const std::string& receipt, std::chrono::milliseconds timeout) = 0;
  // Approximate counts, as SQS's ApproximateNumberOfMessages(NotVisible).
  virtual QueueCounts counts() = 0;
  // The dead-letter queue, or nullptr when max_receives is 0 (no redrive).
  virtual std::shared_ptr<Queue> dead_letter_queue() = 0;
  virtual std::chrono::milliseconds visibility_timeout() const = 0;
  virtual const std::string& url() const = 0;
};

// Sends any number of bodies in batches of at most 10.
void send_all(Queue& queue, std::span<const std::string> bodies);

}  // namespace overhead::pipe
