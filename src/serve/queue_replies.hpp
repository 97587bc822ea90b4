// The worker's side of the reply path over a shared queue (Redis, SQS, a SQLite queue file): an
// item that names a reply queue (SourceRecord::reply_to) is answered there once the worker's
// outcome is known, by the same taps that answer the in-process gateway (reply_taps.hpp). The
// reply queue is opened as a sibling of the worker's input queue (backends/queue_siblings.hpp),
// through the opener the caller gives, and kept open for the next reply.
//
// Failures never stop the worker: the record was already published, and the gateway times its
// request out. They are counted and the first ones are printed. An item that names a queue which
// is not a reply queue of the input queue is refused before any work, as a bad_message dead letter.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "pipe/queue.hpp"
#include "serve/reply_box.hpp"

namespace overhead::serve {

class QueueReplies final : public ReplyPath {
 public:
  using OpenQueue = std::function<std::shared_ptr<pipe::Queue>(const std::string& name)>;
  using IsReplyQueue = std::function<bool(std::string_view name)>;
  // `max_pending`: items noted and not yet answered that are remembered; past it the oldest are
  // forgotten (an item whose record never published leaves its note behind).
  QueueReplies(OpenQueue open, IsReplyQueue accept, std::size_t max_pending = 65536);

  // Throws pipe::ItemError (bad_message) for a reply_to that `accept` refuses.
  void note(const pipe::SourceRecord& source) override;
  void deliver(Reply reply) override;

  struct Counts {
    std::uint64_t sent = 0;
    std::uint64_t failed = 0;  // a reply that could not be sent (the queue refused or failed)
  };
  [[nodiscard]] Counts counts() const;

 private:
  std::shared_ptr<pipe::Queue> queue_for(const std::string& name);
  void count_failure(const std::string& name, const std::string& why);

  OpenQueue open_;
  IsReplyQueue accept_;
  std::size_t max_pending_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::string> pending_;  // request id -> reply queue name
  std::deque<std::string> noted_order_;                   // ids, oldest first, for the bound
  std::map<std::string, std::shared_ptr<pipe::Queue>> queues_;
  Counts counts_;
};

}  // namespace overhead::serve
