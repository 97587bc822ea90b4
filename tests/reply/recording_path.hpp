// A ReplyPath for the tests that keeps what it was handed: the deltas in order and the final
// replies by id, and lets a test wait for a reply.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "reply/reply_path.hpp"

namespace overhead::reply::testing {

class RecordingPath final : public ReplyPath {
 public:
  void text(std::string_view id, std::string_view attempt, std::int64_t offset, std::string_view text) override {
    std::lock_guard lock(mutex_);
    deltas_.push_back(Delta{std::string(id), std::string(attempt), offset, std::string(text)});
  }
  void deliver(Reply reply) override {
    std::lock_guard lock(mutex_);
    replies_[reply.id] = std::move(reply);
    cv_.notify_all();
  }
  // The reply of `id`, waited for up to 5 s; a failed reply with kind "none" when none came.
  Reply wait(const std::string& id) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::seconds(5), [&] { return replies_.count(id) > 0; });
    const auto it = replies_.find(id);
    return it == replies_.end() ? Reply::refused(id, "none", "") : it->second;
  }
  std::vector<Delta> deltas() {
    std::lock_guard lock(mutex_);
    return deltas_;
  }
  std::size_t replies() {
    std::lock_guard lock(mutex_);
    return replies_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Delta> deltas_;
  std::map<std::string, Reply> replies_;
};

}  // namespace overhead::reply::testing
