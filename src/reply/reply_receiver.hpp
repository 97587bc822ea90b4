// The gateway's side of the reply path over a shared queue: one thread receives the workers'
// messages from the gateway's own reply queue, hands each event (reply_codec.hpp: deltas and
// final replies, in order) to the gateway's ReplyPath (its box) and deletes the message. An event
// that cannot be read is dropped and counted (it would fail the same way every time); a reply for
// a request the gateway no longer waits for (answered, timed out, or from before a restart) is
// dropped by the box. With `cancels` (remote_cancels.hpp) the `taken` events tell it which worker
// holds which request, and a final reply ends the request there too.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>

#include "ports/queue.hpp"
#include "reply/remote_cancels.hpp"
#include "reply/reply_path.hpp"

namespace overhead::reply {

class ReplyReceiver {
 public:
  ReplyReceiver(std::shared_ptr<pipe::Queue> replies, ReplyPath& box, RemoteCancels* cancels = nullptr);
  ~ReplyReceiver();
  ReplyReceiver(const ReplyReceiver&) = delete;
  ReplyReceiver& operator=(const ReplyReceiver&) = delete;

  // Ends the thread (after its current receive wait). Idempotent.
  void stop();
  [[nodiscard]] std::uint64_t received() const { return received_.load(); }  // final replies handed over

 private:
  void run();

  std::shared_ptr<pipe::Queue> replies_;
  ReplyPath& box_;
  RemoteCancels* cancels_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> received_{0};
  // Only the first failures of each kind are printed; these count them.
  std::atomic<std::uint64_t> unreadable_{0}, receive_failures_{0};
  std::thread thread_;
};

}  // namespace overhead::reply
