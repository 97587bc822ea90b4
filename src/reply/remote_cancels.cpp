#include "reply/remote_cancels.hpp"

#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include "reply/cancel_message.hpp"

namespace overhead::reply {
namespace {

constexpr std::uint64_t kCancelFailuresPrinted = 10;
// Control queues kept open; past this many (workers come and go, each with its own queue) the
// cache starts again, so a long-running gateway does not hold every queue it ever wrote to.
constexpr std::size_t kMaxOpenQueues = 256;

template <class Set, class Order>
void remember(Set& set, Order& order, const std::string& id, std::size_t max) {
  order.push_back(id);
  while (order.size() > max) {
    set.erase(order.front());
    order.pop_front();
  }
}

}  // namespace

RemoteCancels::RemoteCancels(std::shared_ptr<const ports::QueueFamily> family, std::size_t max_remembered)
    : family_(std::move(family)),
      max_remembered_(max_remembered == 0 ? 1 : max_remembered),
      sender_([this] { run_sender(); }) {}

RemoteCancels::~RemoteCancels() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  sender_.join();
}

void RemoteCancels::queue_cancel(const std::string& control, const std::string& id) {
  append_cancel(outboxes_[control], id);
  ++counts_.cancels;
  wake_.notify_one();
}

void RemoteCancels::taken(const Taken& t) {
  if (!family_->is_sibling(ports::SiblingRole::control, t.control)) {
    std::uint64_t n = 0;
    {
      std::lock_guard lock(mutex_);
      n = ++counts_.refused;
    }
    if (n <= kCancelFailuresPrinted)
      std::fprintf(stderr, "overhead serve: a worker named \"%s\" as its control queue for request %s, which is not a control "
                   "queue of the input queue: no cancel goes there\n", t.control.c_str(), t.id.c_str());
    return;
  }
  std::lock_guard lock(mutex_);
  const auto [it, added] = holders_.insert_or_assign(t.id, t.control);
  if (added) remember(holders_, holder_order_, t.id, max_remembered_);
  if (cancelled_.contains(t.id)) queue_cancel(t.control, t.id);  // cancelled before (or while) it was taken
}

void RemoteCancels::finished(const std::string& id) {
  std::lock_guard lock(mutex_);
  holders_.erase(id);
  cancelled_.erase(id);
  // The order deques keep the id until the bound pushes it out; erasing a missing id is harmless.
}

void RemoteCancels::cancel(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (cancelled_.insert(id).second) remember(cancelled_, cancelled_order_, id, max_remembered_);
  if (const auto it = holders_.find(id); it != holders_.end()) queue_cancel(it->second, id);
}

void RemoteCancels::run_sender() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !outboxes_.empty(); });
    const bool stopping = stop_;
    std::map<std::string, std::string> out;
    out.swap(outboxes_);
    lock.unlock();
    for (const auto& [name, body] : out) {
      try {
        const auto outcome = queue_for(name)->send_batch(std::span<const std::string>(&body, 1));
        if (outcome.empty() || !outcome[0].ok()) {
          count_failure(name, outcome.empty() ? std::string("no outcome") : outcome[0].failure->message);
          continue;
        }
        std::lock_guard count_lock(mutex_);
        ++counts_.sent;
      } catch (const std::exception& e) {
        count_failure(name, e.what());
      }
    }
    lock.lock();
    if (stopping) return;
  }
}

std::shared_ptr<ports::Queue> RemoteCancels::queue_for(const std::string& name) {
  if (const auto it = queues_.find(name); it != queues_.end()) return it->second;
  if (queues_.size() >= kMaxOpenQueues) queues_.clear();
  auto queue = family_->open(name);
  queues_.emplace(name, queue);
  return queue;
}

void RemoteCancels::count_failure(const std::string& name, const std::string& why) {
  std::uint64_t n = 0;
  {
    std::lock_guard lock(mutex_);
    n = ++counts_.failed;
  }
  // The generation then runs to its end, as it would without cancellation; its answer is dropped.
  if (n <= kCancelFailuresPrinted)
    std::fprintf(stderr, "overhead serve: a cancel to control queue %s was not sent (%s); the generation runs to its end%s\n",
                 name.c_str(), why.c_str(), n == kCancelFailuresPrinted ? "; later failures are only counted" : "");
}

RemoteCancels::Counts RemoteCancels::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace overhead::reply
