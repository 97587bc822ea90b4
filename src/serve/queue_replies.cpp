#include "serve/queue_replies.hpp"

#include <cstdio>
#include <exception>
#include <span>

#include "pipe/dead_letter.hpp"
#include "pipe/errors.hpp"
#include "serve/reply_codec.hpp"

namespace overhead::serve {
namespace {

// Failures printed in full; later ones are only counted (a broker that is down would otherwise
// print one line per request).
constexpr std::uint64_t kPrintedFailures = 10;

}  // namespace

QueueReplies::QueueReplies(OpenQueue open, IsReplyQueue accept, std::size_t max_pending)
    : open_(std::move(open)), accept_(std::move(accept)), max_pending_(max_pending == 0 ? 1 : max_pending) {}

void QueueReplies::note(const pipe::SourceRecord& source) {
  if (!source.reply_to) return;
  if (!accept_(*source.reply_to))
    throw pipe::ItemError(pipe::kind_name(pipe::DeadLetterKind::bad_message),
                          "reply_to \"" + *source.reply_to + "\" is not a reply queue of this worker's input queue");
  std::lock_guard lock(mutex_);
  if (pending_.insert_or_assign(source.id, *source.reply_to).second) noted_order_.push_back(source.id);
  while (noted_order_.size() > max_pending_) {
    pending_.erase(noted_order_.front());
    noted_order_.pop_front();
  }
}

std::shared_ptr<pipe::Queue> QueueReplies::queue_for(const std::string& name) {
  {
    std::lock_guard lock(mutex_);
    if (auto it = queues_.find(name); it != queues_.end()) return it->second;
  }
  // Opened outside the lock: connecting can take a while, and another thread's reply to a queue
  // already open need not wait for it. Two threads may open the same queue once; one is kept.
  auto queue = open_(name);
  std::lock_guard lock(mutex_);
  return queues_.try_emplace(name, std::move(queue)).first->second;
}

void QueueReplies::count_failure(const std::string& name, const std::string& why) {
  std::uint64_t n = 0;
  {
    std::lock_guard lock(mutex_);
    n = ++counts_.failed;
  }
  if (n <= kPrintedFailures)
    std::fprintf(stderr, "reply to queue %s not sent (%s)%s\n", name.c_str(), why.c_str(),
                 n == kPrintedFailures ? "; later failures are only counted" : "");
}

void QueueReplies::deliver(Reply reply) {
  std::string name;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(reply.id);
    if (it == pending_.end()) return;  // not a gateway's request, or answered already
    name = std::move(it->second);
    pending_.erase(it);
    // noted_order_ keeps the id until the bound pushes it out; erasing a missing id then is harmless.
  }
  try {
    const std::string body = encode_reply(reply);
    const auto outcome = queue_for(name)->send_batch(std::span<const std::string>(&body, 1));
    if (outcome.empty() || !outcome[0].ok()) {
      count_failure(name, outcome.empty() ? std::string("no outcome") : outcome[0].failure->message);
      return;
    }
    std::lock_guard lock(mutex_);
    ++counts_.sent;
  } catch (const std::exception& e) {
    count_failure(name, e.what());
  }
}

QueueReplies::Counts QueueReplies::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

}  // namespace overhead::serve
