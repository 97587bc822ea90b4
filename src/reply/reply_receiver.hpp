// The gateway's side of the reply path over a shared queue: one thread receives the workers'
// messages from the gateway's own reply queue, hands each event (reply_codec.hpp: deltas and
// final replies, in order) to the gateway's ReplyPath (its box) and deletes the message (the
// reading, deleting, counting and retrying is a QueuePoller's, queue_poller.hpp). A reply for a
// request the gateway no longer waits for (answered, timed out, or from before a restart) is
// dropped by the box. With `cancels` (remote_cancels.hpp) the `taken` events tell it which worker
// holds which request, and a final reply ends the request there too.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ports/queue.hpp"
#include "reply/queue_poller.hpp"
#include "reply/remote_cancels.hpp"
#include "reply/reply_path.hpp"

namespace overhead::reply {

class ReplyReceiver {
 public:
  ReplyReceiver(std::shared_ptr<ports::Queue> replies, ReplyPath& box, RemoteCancels* cancels = nullptr);
  ReplyReceiver(const ReplyReceiver&) = delete;
  ReplyReceiver& operator=(const ReplyReceiver&) = delete;

  // Ends the thread (after its current receive wait). Idempotent.
  void stop() { poller_.stop(); }
  [[nodiscard]] std::uint64_t received() const { return received_.load(); }  // final replies handed over

 private:
  std::vector<std::string> handle(ports::Message& m);

  ReplyPath& box_;
  RemoteCancels* cancels_;
  std::atomic<std::uint64_t> received_{0};
  QueuePoller poller_;  // last: its thread starts once the rest is set up
};

}  // namespace overhead::reply
