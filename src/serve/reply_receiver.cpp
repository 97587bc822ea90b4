#include "serve/reply_receiver.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "serve/reply_codec.hpp"

namespace overhead::serve {
namespace {

// Short enough that stop() returns quickly, long enough that an idle gateway does not spin.
constexpr std::chrono::milliseconds kReceiveWait{200};
// After a failed receive (the broker restarting), before the next try.
constexpr std::chrono::milliseconds kRetryPause{200};

}  // namespace

ReplyReceiver::ReplyReceiver(std::shared_ptr<pipe::Queue> replies, ReplyPath& box)
    : replies_(std::move(replies)), box_(box), thread_([this] { run(); }) {}

ReplyReceiver::~ReplyReceiver() { stop(); }

void ReplyReceiver::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void ReplyReceiver::run() {
  while (!stop_) {
    std::vector<pipe::Message> batch;
    try {
      batch = replies_->receive(pipe::kMaxQueueBatch, kReceiveWait);
    } catch (const std::exception& e) {
      if (receive_failures_.fetch_add(1) < 10)
        std::fprintf(stderr, "overhead serve: receiving replies from %s failed (%s); retrying\n", replies_->url().c_str(), e.what());
      std::this_thread::sleep_for(kRetryPause);
      continue;
    }
    if (batch.empty()) continue;
    std::vector<std::string> receipts;
    receipts.reserve(batch.size());
    for (auto& m : batch) {
      receipts.push_back(m.receipt);
      try {
        box_.deliver(decode_reply(m.body, replies_->url() + " message " + m.id));
        received_.fetch_add(1);
      } catch (const std::exception& e) {
        if (unreadable_.fetch_add(1) < 10) std::fprintf(stderr, "overhead serve: unreadable reply: %s\n", e.what());
      }
    }
    // A reply is worth nothing once handed over (or unreadable): delete it. A failed delete lets
    // it come back, and the box drops a second answer to the same request.
    try {
      (void)replies_->delete_batch(receipts);
    } catch (const std::exception&) {
      receive_failures_.fetch_add(1);
    }
  }
}

}  // namespace overhead::serve
