// The gateway's side of cancellation over a shared queue. A worker that can stop its generations
// names its control queue when it takes a request up (a `taken` event on the reply queue,
// reply_codec.hpp); when the request's client goes away or its --request-timeout passes, the
// gateway sends a cancel there (cancel_message.hpp) and the worker closes the engine's request
// (control_receiver.hpp). So a cancel reaches the worker holding the request on any shared queue
// backend, through the Queue port only.
//
// A cancel that comes before the worker said it took the request (the item still on the queue,
// or its `taken` event still in the worker's outbox) is remembered, a bounded number of them, and
// sent when the `taken` event arrives; so is one for a request taken again by another worker
// after its first died (redelivery). A request's entries are dropped with its final reply.
//
// Sending never blocks the caller (it runs on the HTTP side, possibly on the event loop): cancels
// wait in one outbox per control queue and one thread sends them, each outbox in one message. A
// control queue name that is not one of the input queue's family (ports/queue_family.hpp) is
// never written to.
#pragma once

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
#include <unordered_set>

#include "ports/queue.hpp"
#include "ports/queue_family.hpp"
#include "reply/reply.hpp"

namespace overhead::reply {

class RemoteCancels {
 public:
  // `family`: the gateway's input queue's; a worker's control queue is opened there, and only when
  // its name follows the family's control rule.
  // `max_remembered`: requests whose worker is known, and cancels waiting for a worker, each at
  // most this many (the oldest forgotten first).
  RemoteCancels(std::shared_ptr<const ports::QueueFamily> family, std::size_t max_remembered = 65536);
  // Sends what waits (a bounded time: one call per control queue), then stops the sender.
  ~RemoteCancels();
  RemoteCancels(const RemoteCancels&) = delete;
  RemoteCancels& operator=(const RemoteCancels&) = delete;

  // A worker took request `t.id` up and reads `t.control`.
  void taken(const Taken& t);
  // The request's final reply arrived: nothing more to cancel.
  void finished(const std::string& id);
  // Cancels the request's generation wherever it runs, now or once a worker takes it.
  void cancel(const std::string& id);

  struct Counts {
    std::uint64_t cancels = 0;  // cancels put in an outbox for a worker
    std::uint64_t sent = 0;     // messages sent (each one broker call)
    std::uint64_t failed = 0;   // messages that could not be sent
    std::uint64_t refused = 0;  // taken events naming a queue that is not a control queue of the input
  };
  [[nodiscard]] Counts counts() const;

 private:
  void queue_cancel(const std::string& control, const std::string& id);  // with mutex_ held
  void run_sender();
  std::shared_ptr<ports::Queue> queue_for(const std::string& name);
  void count_failure(const std::string& name, const std::string& why);

  std::shared_ptr<const ports::QueueFamily> family_;
  std::size_t max_remembered_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::unordered_map<std::string, std::string> holders_;  // request id -> its worker's control queue
  std::deque<std::string> holder_order_;
  std::unordered_set<std::string> cancelled_;  // cancelled requests not yet finished
  std::deque<std::string> cancelled_order_;
  std::map<std::string, std::string> outboxes_;  // control queue -> cancel lines waiting
  std::map<std::string, std::shared_ptr<ports::Queue>> queues_;  // only the sender touches it
  bool stop_ = false;
  Counts counts_;
  std::thread sender_;
};

}  // namespace overhead::reply
