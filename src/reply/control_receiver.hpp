// The worker's side of cancellation over a shared queue: one thread reads the worker's own control
// queue (backends/queue_siblings.hpp: "<input>-ctl-<host>-<pid>", named to gateways in `taken`
// events, queue_replies.hpp) and hands the id of every cancel (cancel_message.hpp) to `on_cancel`
// (the worker host's pipe::GenerationCancels: the engine's request is closed, or the generation
// is cancelled as it starts). The reading, deleting, counting and retrying is a QueuePoller's
// (queue_poller.hpp): a cancel is acted on once read, and one that comes back after a failed
// delete cancels nothing more (cancelling is idempotent).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "ports/queue.hpp"
#include "reply/queue_poller.hpp"

namespace overhead::reply {

class ControlReceiver {
 public:
  using OnCancel = std::function<void(const std::string& id)>;
  ControlReceiver(std::shared_ptr<ports::Queue> control, OnCancel on_cancel);
  ControlReceiver(const ControlReceiver&) = delete;
  ControlReceiver& operator=(const ControlReceiver&) = delete;

  // Ends the thread (after its current receive wait). Idempotent.
  void stop() { poller_.stop(); }
  [[nodiscard]] std::uint64_t cancels() const { return cancels_.load(); }  // cancels handed over

 private:
  OnCancel on_cancel_;
  std::atomic<std::uint64_t> cancels_{0};
  QueuePoller poller_;  // last: its thread starts once the rest is set up
};

}  // namespace overhead::reply
