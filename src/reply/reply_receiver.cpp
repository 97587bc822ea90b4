#include "reply/reply_receiver.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "reply/reply_codec.hpp"

namespace overhead::reply {
namespace {

// Short enough that stop() returns quickly, long enough that an idle gateway does not spin.
constexpr std::chrono::milliseconds kReceiveWait{200};
// After a failed receive (the broker restarting), before the next try.
constexpr std::chrono::milliseconds kRetryPause{200};

}  // namespace

ReplyReceiver::ReplyReceiver(std::shared_ptr<pipe::Queue> replies, ReplyPath& box, RemoteCancels* cancels)
    : replies_(std::move(replies)), box_(box), cancels_(cancels), thread_([this] { run(); }) {}

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
      const auto errors = decode_events(m.body, replies_->url() + " message " + m.id, [&](ReplyEvent&& event) {
        if (auto* d = std::get_if<Delta>(&event)) {
          box_.text(d->id, d->attempt, d->offset, d->text);
        } else if (auto* t = std::get_if<Taken>(&event)) {
          if (cancels_) cancels_->taken(*t);
        } else {
          Reply& r = std::get<Reply>(event);
          if (cancels_) cancels_->finished(r.id);
          box_.deliver(std::move(r));
          received_.fetch_add(1);
        }
      });
      for (const auto& e : errors)
        if (unreadable_.fetch_add(1) < 10) std::fprintf(stderr, "overhead serve: unreadable reply: %s\n", e.c_str());
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

}  // namespace overhead::reply
