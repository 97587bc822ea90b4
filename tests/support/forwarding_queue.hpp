// A queue that passes every call of the port's required methods to another queue: the base of
// the tests' fault-injecting decorators (a receive that throws, a delete that fails), which then
// override only the call they change. The port's optional methods keep their defaults.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ports/queue.hpp"

namespace overhead::test_support {

class ForwardingQueue : public ports::Queue {
 public:
  explicit ForwardingQueue(std::shared_ptr<ports::Queue> inner) : inner_(std::move(inner)) {}
  std::vector<ports::SendOutcome> send_batch(std::span<const std::string> bodies) override { return inner_->send_batch(bodies); }
  std::vector<ports::Message> receive(std::size_t max, std::chrono::milliseconds wait) override { return inner_->receive(max, wait); }
  std::vector<std::string> delete_batch(std::span<const std::string> receipts) override { return inner_->delete_batch(receipts); }
  std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts, std::chrono::milliseconds timeout) override {
    return inner_->change_visibility_batch(receipts, timeout);
  }
  ports::QueueCounts counts() override { return inner_->counts(); }
  std::shared_ptr<ports::Queue> dead_letter_queue() override { return inner_->dead_letter_queue(); }
  std::chrono::milliseconds visibility_timeout() const override { return inner_->visibility_timeout(); }
  const std::string& url() const override { return inner_->url(); }

 protected:
  ports::Queue& inner() { return *inner_; }

 private:
  std::shared_ptr<ports::Queue> inner_;
};

}  // namespace overhead::test_support
