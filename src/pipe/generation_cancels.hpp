// Which generations are running, by request id, so that a gateway in the same process can stop one
// whose client went away or whose --request-timeout passed: cancel(id) cancels its DecodeTicket
// (the engine's request is closed and the record's finish_reason says "cancelled"). An id
// cancelled before its generation started (still queued) is remembered, a bounded number of them,
// and its generation is cancelled as it starts.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ports/decoder.hpp"

namespace overhead::pipe {

class GenerationCancels {
 public:
  explicit GenerationCancels(std::size_t max_remembered = 4096) : max_remembered_(max_remembered) {}

  // The worker started (or restarted) the generation of `id`.
  void started(const std::string& id, std::shared_ptr<ports::DecodeTicket> ticket);
  // It ended (done, failed or cancelled). Idempotent.
  void ended(const std::string& id);
  // Cancels the running generation of `id`; else remembers the id for a generation yet to start.
  // Returns whether one was running.
  bool cancel(const std::string& id);
  [[nodiscard]] std::size_t running() const;

 private:
  const std::size_t max_remembered_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<ports::DecodeTicket>> running_;
  std::unordered_set<std::string> early_;  // cancelled before they started
  std::deque<std::string> early_order_;    // the oldest forgotten first past max_remembered_
};

}  // namespace overhead::pipe
