#include "reply/queue_poller.hpp"

#include <cstdio>
#include <exception>

namespace overhead::reply {

QueuePoller::QueuePoller(std::shared_ptr<ports::Queue> queue, QueuePollerOptions options, Handle handle)
    : queue_(std::move(queue)), options_(std::move(options)), handle_(std::move(handle)), thread_([this] { run(); }) {}

QueuePoller::~QueuePoller() { stop(); }

void QueuePoller::stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void QueuePoller::run() {
  while (!stop_) {
    std::vector<ports::Message> batch;
    try {
      batch = queue_->receive(ports::kMaxQueueBatch, options_.receive_wait);
    } catch (const std::exception& e) {
      if (failures_.fetch_add(1) < options_.failures_printed)
        std::fprintf(stderr, "%s from %s failed (%s); retrying\n", options_.receive_failure.c_str(), queue_->url().c_str(), e.what());
      std::this_thread::sleep_for(options_.retry_pause);
      continue;
    }
    if (batch.empty()) continue;
    std::vector<std::string> receipts;
    receipts.reserve(batch.size());
    for (auto& m : batch) {
      receipts.push_back(m.receipt);
      for (const auto& e : handle_(m))
        if (unreadable_.fetch_add(1) < options_.failures_printed)
          std::fprintf(stderr, "%s: %s\n", options_.unreadable.c_str(), e.c_str());
    }
    try {
      (void)queue_->delete_batch(receipts);
    } catch (const std::exception&) {
      failures_.fetch_add(1);
    }
  }
}

}  // namespace overhead::reply
