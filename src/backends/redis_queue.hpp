// The Redis Streams queue (`redis://[USER:PASS@]HOST:PORT/STREAM?group=G&visibility_ms=&max_receives=
// &max_message_bytes=&timeout_ms=&block_ms=&db=N&retry_ms=`): the Queue contract on one stream and one consumer group.
//   send      pipelined XADD (one round trip per batch of 10), field "b" = body;
//   receive   one script: reclaim entries whose visibility ended, move those received max_receives
//             times to STREAM-dlq (with the reason and the count), XREADGROUP new ones; when none,
//             XREAD BLOCK waits for the next entry (on its own pooled connection);
//   receipt   "<entry id>:<delivery count>"; a redelivery raises the count, so an old receipt fails;
//   delete    one script: check the receipt against the pending list, XACK + XDEL;
//   extend    one script: XCLAIM ... TIME to the same consumer (JUSTID, the count stays).
// Each Queue object is one consumer named host:pid:n, so a consumer that dies leaves its pending
// entries to be reclaimed by the others. The group is created (MKSTREAM, from the first entry)
// when missing. Connections come from a small pool, one per concurrent caller. A lost connection
// (a server restart) is retried with backoff for up to retry_ms (default: timeout_ms) before the
// call fails with a transient QueueError; a refused command fails at once, permanent.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/redis_connection.hpp"
#include "ports/backend_url.hpp"
#include "ports/queue.hpp"

namespace overhead::backends {

struct RedisQueueConfig {
  RedisEndpoint endpoint;
  std::string stream;
  std::string group = "overhead";
  std::chrono::milliseconds visibility{30000};
  int max_receives = 0;
  std::chrono::milliseconds block_max{1000};  // longest single XREAD BLOCK inside a receive wait
  std::chrono::milliseconds retry{ports::kDefaultCallTimeout};  // how long a lost connection is retried
  std::chrono::milliseconds call_timeout{ports::kDefaultCallTimeout};  // bound on one server reply
  std::size_t max_message_bytes = ports::kDefaultMaxMessageBytes;
  bool is_dead_letter = false;
};

class RedisQueue final : public ports::Queue {
 public:
  // Connects once (so a bad host, port or password fails here, with one clear line) and creates
  // the group. `clock` = queue time for tests; empty = the server's clock.
  RedisQueue(std::string url, RedisQueueConfig config, ports::ClockMs clock);

  std::vector<ports::SendOutcome> send_batch(std::span<const std::string> bodies) override;
  std::vector<ports::Message> receive(std::size_t max, std::chrono::milliseconds wait) override;
  std::vector<std::string> delete_batch(std::span<const std::string> receipts) override;
  std::vector<std::string> change_visibility_batch(std::span<const std::string> receipts,
                                                   std::chrono::milliseconds timeout) override;
  ports::QueueCounts counts() override;
  // Adds the oldest entry's age (by the server's clock) and the group's consumers.
  ports::QueueStatus status() override;
  std::shared_ptr<ports::Queue> dead_letter_queue() override;
  // One XADD to STREAM-dlq with the fields the redrive script writes: b, reason, receives, source.
  bool send_to_dead_letters(const std::string& receipt, const std::string& body, const std::string& reason) override;
  std::chrono::milliseconds visibility_timeout() const override { return config_.visibility; }
  std::size_t max_message_bytes() const override { return config_.max_message_bytes; }
  const std::string& url() const override { return url_; }

 private:
  std::unique_ptr<RedisConnection> acquire();
  void release(std::unique_ptr<RedisConnection> conn);
  // Runs fn(connection, attempt) and retries it on a lost connection with backoff until
  // config_.retry has passed; server errors pass through.
  template <class Fn>
  auto with_retry(const char* what, Fn&& fn);
  Reply run_script(RedisConnection& conn, int which, const std::vector<std::string>& keys_and_args, std::size_t nkeys);
  void ensure_group(RedisConnection& conn);
  std::string now_arg() const;

  const std::string url_;  // redacted
  const RedisQueueConfig config_;
  const ports::ClockMs clock_;
  const std::string dlq_stream_;
  std::string consumer_;
  std::string script_sha_[3];

  std::mutex pool_mutex_;
  std::vector<std::unique_ptr<RedisConnection>> idle_;
  std::mutex dlq_mutex_;
  std::shared_ptr<ports::Queue> dead_letters_;
};

// Opens the queue of a parsed redis:// URL (the open_queue arm); throws std::invalid_argument
// naming the redacted URL for a bad or unknown parameter or a missing stream name.
std::shared_ptr<ports::Queue> open_redis_queue(const ports::BackendUrl& url, const ports::ClockMs& clock);

}  // namespace overhead::backends
