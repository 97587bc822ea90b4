#include "pipe/generation_cancels.hpp"

namespace overhead::pipe {

using ports::DecodeTicket;

void GenerationCancels::started(const std::string& id, std::shared_ptr<DecodeTicket> ticket) {
  if (!ticket) return;
  {
    std::lock_guard lock(mutex_);
    if (early_.erase(id) == 0) {
      running_[id] = std::move(ticket);
      return;
    }
  }
  ticket->cancel();  // cancelled while it waited to start (outside the lock: it may end at once)
}

void GenerationCancels::ended(const std::string& id) {
  std::lock_guard lock(mutex_);
  running_.erase(id);
}

bool GenerationCancels::cancel(const std::string& id) {
  std::shared_ptr<DecodeTicket> ticket;
  {
    std::lock_guard lock(mutex_);
    if (const auto it = running_.find(id); it != running_.end()) {
      ticket = it->second;
    } else {
      if (early_.insert(id).second) early_order_.push_back(id);
      while (early_order_.size() > max_remembered_) {
        early_.erase(early_order_.front());
        early_order_.pop_front();
      }
      return false;
    }
  }
  ticket->cancel();  // thread-safe, idempotent; its callbacks end with on_done(cancelled)
  return true;
}

std::size_t GenerationCancels::running() const {
  std::lock_guard lock(mutex_);
  return running_.size();
}

}  // namespace overhead::pipe
