// The worker's side of cancellation over a shared queue: one thread reads the worker's own control
// queue (backends/queue_siblings.hpp: "<input>-ctl-<host>-<pid>", named to gateways in `taken`
// events, queue_replies.hpp) and hands the id of every cancel (cancel_message.hpp) to `on_cancel`
// (the worker host's pipe::GenerationCancels: the engine's request is closed, or the generation
// is cancelled as it starts). Each message is deleted once read; an unreadable line is counted
// and the first ones printed. A receive that fails (the broker restarting) is retried.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "ports/queue.hpp"

namespace overhead::reply {

class ControlReceiver {
 public:
  using OnCancel = std::function<void(const std::string& id)>;
  ControlReceiver(std::shared_ptr<pipe::Queue> control, OnCancel on_cancel);
  ~ControlReceiver();
  ControlReceiver(const ControlReceiver&) = delete;
  ControlReceiver& operator=(const ControlReceiver&) = delete;

  // Ends the thread (after its current receive wait). Idempotent.
  void stop();
  [[nodiscard]] std::uint64_t cancels() const { return cancels_.load(); }  // cancels handed over

 private:
  void run();

  std::shared_ptr<pipe::Queue> control_;
  OnCancel on_cancel_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> cancels_{0}, unreadable_{0}, receive_failures_{0};
  std::thread thread_;
};

}  // namespace overhead::reply
