// The gateway's side of the reply path: every request the gateway queued, its state (queued,
// done, failed) and, once the worker answered, its reply. A synchronous request waits here for
// its reply; an asynchronous one is looked up by id (GET /v1/requests/{id}).
//
// The worker side only sees `ReplyPath`. In one process the box is its own reply path (the
// worker's taps call deliver directly). Over a shared queue (Redis, SQS) the gateway owns a reply
// queue, named in every work item; workers answer on it (queue_replies.hpp) and the gateway's
// receiver (reply_receiver.hpp) calls deliver here; nothing else in the gateway changes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "pipe/record.hpp"
#include "pipe/work_item.hpp"

namespace overhead::serve {

// What the worker answers for one request: its record (ok), or the dead-letter kind and reason.
struct Reply {
  std::string id;
  bool ok = false;
  pipe::Record record;      // when ok: as published (publish_acked and input_deleted come later, to the store)
  std::string error_kind;   // when not ok: a pipe::DeadLetterKind name (template_error, ...)
  std::string error_reason;
};

// Where the worker hands replies. Thread-safe; a reply for an unknown or finished id is dropped
// (a replayed item after a redelivery answers twice).
class ReplyPath {
 public:
  virtual ~ReplyPath() = default;
  // Told of every item before it is processed, so a path that answers over a queue can remember
  // where the item's reply goes (SourceRecord::reply_to); the in-process box needs nothing.
  virtual void note(const pipe::SourceRecord& /*source*/) {}
  virtual void deliver(Reply reply) = 0;
};

enum class RequestState { queued, done, failed };
[[nodiscard]] const char* state_name(RequestState s);

// What the gateway knows of one request it queued.
struct RequestInfo {
  std::string model;      // as the client named it
  std::string tokenizer;  // the listed name it was queued under
  std::int64_t created = 0;       // unix seconds, for the response's `created`
  std::int64_t submitted_ns = 0;  // monotonic ns just before the send to the input queue
  bool kept = false;      // asynchronous: kept after it finished, until evicted
};

struct RequestSnapshot {
  RequestInfo info;
  RequestState state = RequestState::queued;
  std::optional<Reply> reply;
  std::int64_t replied_ns = 0;  // monotonic ns at which the reply arrived
};

class ReplyBox final : public ReplyPath {
 public:
  // `max_kept`: finished asynchronous requests kept for lookup; the oldest go first.
  explicit ReplyBox(std::size_t max_kept = 10000) : max_kept_(max_kept) {}

  // Registers a request before it is sent, so that a fast reply cannot arrive first.
  void open(const std::string& id, RequestInfo info);
  void deliver(Reply reply) override;
  // Waits for the reply of `id` until `deadline`; empty on a timeout, on cancel_all() or for an
  // unknown id. The snapshot is the request's state at return.
  [[nodiscard]] std::optional<RequestSnapshot> wait(const std::string& id, std::chrono::steady_clock::time_point deadline);
  [[nodiscard]] std::optional<RequestSnapshot> find(const std::string& id) const;
  // Drops a request whose answer was written (synchronous ones), or that was never sent.
  void forget(const std::string& id);
  // Wakes every waiter with no reply (shutdown past its deadline).
  void cancel_all();
  [[nodiscard]] bool cancelled() const;
  // Requests queued and not yet answered.
  [[nodiscard]] std::size_t queued() const;

 private:
  // One condition variable per request, so a reply wakes only its own waiter.
  struct Slot {
    RequestSnapshot snapshot;
    std::condition_variable cv;
  };
  std::size_t max_kept_;
  mutable std::mutex mutex_;
  bool cancelled_ = false;
  std::unordered_map<std::string, std::shared_ptr<Slot>> slots_;
  std::deque<std::string> finished_kept_;  // finished asynchronous ids, oldest first
  std::size_t queued_ = 0;
};

}  // namespace overhead::serve
