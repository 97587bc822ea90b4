// The durable embedded queue backend (`sqlite-queue:PATH[?name=queue&visibility_ms=30000&
// max_receives=0&max_message_bytes=262144&timeout_ms=10000]`), shared by processes on one host: SQS semantics kept in a
// SQLite file (WAL). Every state change is one transaction, so a process killed at any point
// leaves each message either visible, in flight until its deadline, or deleted; nothing is lost.
// Deadlines are wall-clock milliseconds because they must mean the same after a restart.
#pragma once

#include <mutex>
#include <random>

#include "backends/sqlite_db.hpp"
#include "ports/backend_url.hpp"
#include "ports/queue.hpp"

namespace overhead::backends {

struct SqliteQueueLimits {
  std::size_t max_message_bytes = ports::kDefaultMaxMessageBytes;
  std::chrono::milliseconds call_timeout = ports::kDefaultCallTimeout;  // SQLite's busy timeout
};

class SqliteQueue final : public ports::Queue {
 public:
  using Limits = SqliteQueueLimits;
  SqliteQueue(std::string url, const std::string& path, std::string name, std::chrono::milliseconds visibility,
              int max_receives, ports::ClockMs clock, Limits limits = {});

  std::vector<ports::SendOutcome> send_batch(std::span<const std::string> bodies) override;
  std::vector<ports::Message> receive(std::size_t max, std::chrono::milliseconds wait) override;
  std::vector<std::string> delete_batch(std::span<const std::string> receipts) override;
  std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts,
                                                   std::chrono::milliseconds timeout) override;
  ports::QueueCounts counts() override;
  std::shared_ptr<ports::Queue> dead_letter_queue() override;
  std::chrono::milliseconds visibility_timeout() const override { return visibility_; }
  std::size_t max_message_bytes() const override { return limits_.max_message_bytes; }
  const std::string& url() const override { return url_; }

 private:
  std::vector<ports::Message> receive_once(std::size_t max);

  const std::string url_;
  const std::string path_;
  const std::string name_;
  const std::chrono::milliseconds visibility_;
  const int max_receives_;
  const Limits limits_;
  const ports::ClockMs clock_;

  std::mutex mutex_;  // one connection per object; SQLite serialises the processes
  SqliteDb db_;
  SqliteStatement insert_, select_visible_, mark_received_, move_dead_, delete_, change_vis_, count_;
  std::mt19937_64 rng_;
  std::shared_ptr<ports::Queue> dead_letters_;
};

// The `sqlite-queue:` arm of open_queue.
std::shared_ptr<ports::Queue> open_sqlite_queue(const ports::BackendUrl& url, const ports::ClockMs& clock);

}  // namespace overhead::backends
