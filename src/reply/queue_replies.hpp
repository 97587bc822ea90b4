// How a worker answers on a reply queue (the RPC pattern over a shared broker: Redis, SQS, a
// SQLite queue file): an item that names a reply queue (its reply_to) is answered there, in the
// reply codec's format (reply_codec.hpp). The reply queue is opened as a sibling of the worker's
// input queue, in the input queue's family (ports/queue_family.hpp), and kept open for the next
// reply.
//
// Batching: events wait in one outbox per reply queue and leave in one message:
//   - the first delta of a request, and every final reply, go at once (they wake the sender);
//   - later deltas wait at most `window` (50 ms by default) after the oldest event in the outbox,
//     or until the outbox holds `max_bytes` (64 KiB), whichever comes first.
// So the added latency is 0 for the first token and for the end of an answer, and at most the
// window for a token in between; a gateway with N streams from one worker costs at most one
// broker call per window, not one per token (a 50 token/s stream: about 2.5 tokens per call,
// and all the streams of one gateway share the call). Contiguous deltas of one stream are merged
// into one event. One sender thread sends each reply queue's messages in order.
//
// Cancellation: a worker that reads a control queue (`control`, reply/control_receiver.hpp) says
// so when it takes a request up: a `taken` event naming that queue waits in the outbox like a
// later delta (at most the window; the first delta or the final reply takes it along sooner), so
// it costs no broker call of its own while the stream runs. The gateway sends its cancels there.
//
// Failures never stop the worker: the record was already published. They are counted and the
// first ones printed; the gateway sees a stream's gap (offsets) or times the request out. An item
// naming a queue which is not a reply queue of the input queue is refused before any work, as a
// bad_message dead letter.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "ports/queue.hpp"
#include "ports/queue_family.hpp"
#include "reply/reply_path.hpp"

namespace overhead::reply {

struct ReplyBatching {
  std::chrono::milliseconds window{50};
  std::size_t max_bytes = 64 * 1024;
};

class QueueReplies final : public ReplyPath {
 public:
  // `family`: the worker's input queue's; an item's reply queue is opened there, and only when
  // its name follows the family's reply rule.
  // `max_pending`: items noted and not yet answered that are remembered; past it the oldest are
  // forgotten (an item whose record never published leaves its note behind).
  // `control`: this worker's control queue, named to the gateway in a `taken` event when an item
  // is noted; empty: the worker cannot be reached for cancels, no event is sent.
  QueueReplies(std::shared_ptr<const ports::QueueFamily> family, std::size_t max_pending = 65536, ReplyBatching batching = {},
               std::string control = {});
  // Sends what is still waiting, then stops the sender.
  ~QueueReplies() override;
  QueueReplies(const QueueReplies&) = delete;
  QueueReplies& operator=(const QueueReplies&) = delete;

  // Throws ports::ItemError (bad_message) for a reply_to that is not a reply queue of the family.
  void note(const std::string& id, const std::optional<std::string>& reply_to) override;
  void text(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text) override;
  void deliver(Reply reply) override;
  // Sends everything waiting now and returns when it is sent (or failed).
  void flush();

  struct Counts {
    std::uint64_t sent = 0;      // final replies sent
    std::uint64_t failed = 0;    // messages that could not be sent (the queue refused or failed)
    std::uint64_t messages = 0;  // messages sent (each one broker call)
    std::uint64_t deltas = 0;    // deltas handed in
  };
  [[nodiscard]] Counts counts() const;

 private:
  struct Pending {
    std::string queue;
    bool streamed = false;  // a delta went out: the final reply leaves its text out
  };
  struct Outbox {
    std::deque<std::string> bodies;  // in order; only the last one grows
    std::int64_t oldest_ns = 0;      // when the oldest waiting event came; 0: nothing waits
    std::deque<std::uint64_t> replies;  // final replies in each body
    bool urgent = false;
    // The last line of the last body is a delta of this id and attempt, ending at this offset.
    std::string last_id, last_attempt;
    std::int64_t last_end = -1;
  };

  std::shared_ptr<ports::Queue> queue_for(const std::string& name);
  void count_failure(const std::string& name, const std::string& why);
  std::string& body_for(Outbox& box);
  void run_sender();
  void send_out(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<const ports::QueueFamily> family_;
  std::size_t max_pending_;
  ReplyBatching batching_;
  std::string control_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;     // an urgent outbox, a flush or the stop
  std::condition_variable flushed_;  // the sender finished a round
  std::unordered_map<std::string, Pending> pending_;  // request id -> where and how it is answered
  std::deque<std::string> noted_order_;               // ids, oldest first, for the bound
  std::map<std::string, Outbox> outboxes_;            // by reply queue name
  std::map<std::string, std::shared_ptr<ports::Queue>> queues_;
  std::uint64_t rounds_started_ = 0, rounds_finished_ = 0;  // the sender's rounds
  bool flush_asked_ = false;
  bool stop_ = false;
  Counts counts_;
  std::thread sender_;
};

}  // namespace overhead::reply
