#include "reply/control_receiver.hpp"

#include <cstdio>
#include <exception>
#include <vector>

#include "reply/cancel_message.hpp"

namespace overhead::reply {
namespace {

// A receive returns as soon as a cancel arrives (Redis XREADGROUP BLOCK, SQS long polling); the
// wait only bounds how long stop() takes and sets the idle cost: one broker call a second.
constexpr std::chrono::milliseconds kControlReceiveWait{1000};
constexpr std::chrono::milliseconds kControlRetryPause{200};
constexpr std::uint64_t kControlFailuresPrinted = 10;

}  // namespace

ControlReceiver::ControlReceiver(std::shared_ptr<pipe::Queue> control, OnCancel on_cancel)
    : control_(std::move(control)), on_cancel_(std::move(on_cancel)), thread_([this] { run(); }) {}

ControlReceiver::~ControlReceiver() { stop(); }

void ControlReceiver::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ControlReceiver::run() {
  while (!stop_) {
    std::vector<pipe::Message> batch;
    try {
      batch = control_->receive(pipe::kMaxQueueBatch, kControlReceiveWait);
    } catch (const std::exception& e) {
      if (receive_failures_.fetch_add(1) < kControlFailuresPrinted)
        std::fprintf(stderr, "receiving cancels from %s failed (%s); retrying\n", control_->url().c_str(), e.what());
      std::this_thread::sleep_for(kControlRetryPause);
      continue;
    }
    if (batch.empty()) continue;
    std::vector<std::string> receipts;
    receipts.reserve(batch.size());
    for (auto& m : batch) {
      receipts.push_back(m.receipt);
      const auto errors = decode_cancels(m.body, control_->url() + " message " + m.id, [&](std::string&& id) {
        on_cancel_(id);
        cancels_.fetch_add(1);
      });
      for (const auto& e : errors)
        if (unreadable_.fetch_add(1) < kControlFailuresPrinted) std::fprintf(stderr, "unreadable cancel: %s\n", e.c_str());
    }
    // A cancel is acted on once read: delete it. One that comes back after a failed delete
    // cancels nothing more (cancelling is idempotent).
    try {
      (void)control_->delete_batch(receipts);
    } catch (const std::exception&) {
      receive_failures_.fetch_add(1);
    }
  }
}

}  // namespace overhead::reply
