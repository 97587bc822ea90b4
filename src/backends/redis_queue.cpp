#include "backends/redis_queue.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <stdexcept>
#include <thread>

#include "backends/redis_scripts.hpp"

namespace overhead::backends {

using ports::kMaxQueueBatch;
using ports::Message;
using ports::QueueError;

namespace {

constexpr std::size_t kMaxIdleConnections = 16;
enum Script { kReceive = 0, kDelete = 1, kVisibility = 2 };
const char* const kScripts[] = {kRedisReceiveScript, kRedisDeleteScript, kRedisVisibilityScript};

std::string unique_consumer_name() {
  static std::atomic<int> counter{0};
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] ? host : "host") + ":" + std::to_string(getpid()) + ":" + std::to_string(counter++);
}

// "<ms>-<seq>:<count>" -> (entry id, count); false for anything else.
bool parse_redis_receipt(const std::string& receipt, std::string& id, long long& count) {
  const auto colon = receipt.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const char* b = receipt.data();
  const auto r = std::from_chars(b + colon + 1, b + receipt.size(), count);
  if (r.ec != std::errc() || r.ptr != b + receipt.size() || count < 1) return false;
  id = receipt.substr(0, colon);
  const auto dash = id.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == id.size()) return false;
  for (std::size_t i = 0; i < id.size(); ++i)
    if (i != dash && (id[i] < '0' || id[i] > '9')) return false;
  return true;
}

bool mentions(const std::exception& e, const char* word) { return std::string(e.what()).find(word) != std::string::npos; }

}  // namespace

RedisQueue::RedisQueue(std::string url, RedisQueueConfig config, ports::ClockMs clock)
    : url_(ports::redact_url(url)), config_(std::move(config)), clock_(std::move(clock)),
      dlq_stream_(config_.stream + "-dlq"), consumer_(unique_consumer_name()) {
  if (config_.stream.empty()) throw std::invalid_argument("queue URL \"" + url_ + "\": no stream name (redis://HOST:PORT/STREAM)");
  auto conn = std::make_unique<RedisConnection>(config_.endpoint);
  ensure_group(*conn);
  for (int i = 0; i < 3; ++i) script_sha_[i] = reply_string(conn->command({"SCRIPT", "LOAD", kScripts[i]}).get());
  release(std::move(conn));
}

void RedisQueue::ensure_group(RedisConnection& conn) {
  try {
    conn.command({"XGROUP", "CREATE", config_.stream, config_.group, "0", "MKSTREAM"});
  } catch (const RedisServerError& e) {
    if (!mentions(e, "BUSYGROUP")) throw;
  }
}

std::unique_ptr<RedisConnection> RedisQueue::acquire() {
  {
    std::lock_guard lock(pool_mutex_);
    if (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      return c;
    }
  }
  return std::make_unique<RedisConnection>(config_.endpoint);
}

void RedisQueue::release(std::unique_ptr<RedisConnection> conn) {
  if (!conn || !conn->healthy()) return;
  std::lock_guard lock(pool_mutex_);
  if (idle_.size() < kMaxIdleConnections) idle_.push_back(std::move(conn));
}

template <class Fn>
auto RedisQueue::with_retry(const char* what, Fn&& fn) {
  const auto deadline = std::chrono::steady_clock::now() + config_.retry;
  auto backoff = std::chrono::milliseconds(50);
  for (int attempt = 0;; ++attempt) {
    try {
      auto conn = acquire();
      try {
        if (attempt > 0) ensure_group(*conn);  // a server that lost its data (no AOF) lost the group too
        auto result = fn(*conn, attempt);
        release(std::move(conn));
        return result;
      } catch (const RedisServerError& e) {
        // LOADING: a restarted server reads its AOF before it serves; that passes.
        if (!mentions(e, "LOADING")) {
          release(std::move(conn));
          throw;
        }
        throw RedisIoError(e.what());
      }
    } catch (const RedisIoError& e) {
      if (std::chrono::steady_clock::now() + backoff > deadline)
        throw QueueError(url_ + ": " + what + ": Redis unreachable for " + std::to_string(config_.retry.count()) +
                             " ms: " + e.what(),
                         ports::Failure::transient);
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
    }
  }
}

Reply RedisQueue::run_script(RedisConnection& conn, int which, const std::vector<std::string>& keys_and_args, std::size_t nkeys) {
  std::vector<std::string> argv{"EVALSHA", script_sha_[which], std::to_string(nkeys)};
  argv.insert(argv.end(), keys_and_args.begin(), keys_and_args.end());
  try {
    return conn.command(argv, config_.call_timeout);
  } catch (const RedisServerError& e) {
    if (!mentions(e, "NOSCRIPT")) throw;
    conn.command({"SCRIPT", "LOAD", kScripts[which]}, config_.call_timeout);  // a restarted server forgot its scripts
    return conn.command(argv, config_.call_timeout);
  }
}

std::string RedisQueue::now_arg() const { return clock_ ? std::to_string(clock_()) : std::string(); }

std::vector<ports::SendOutcome> RedisQueue::send_batch(std::span<const std::string> bodies) {
  const auto too_large = ports::check_send_batch(bodies, config_.max_message_bytes, url_);
  std::vector<std::vector<std::string>> commands;
  std::vector<std::size_t> sent;  // index into bodies of each XADD
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (too_large[i]) continue;
    commands.push_back({"XADD", config_.stream, "*", "b", bodies[i]});
    sent.push_back(i);
  }
  std::vector<ports::SendOutcome> out(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) out[i].failure = too_large[i];
  if (commands.empty()) return out;
  // A retry after a lost reply may add an entry twice; the queue delivers at least once anyway.
  auto replies = with_retry("send", [&](RedisConnection& conn, int) { return conn.pipeline(commands, config_.call_timeout); });
  for (std::size_t k = 0; k < replies.size(); ++k) {
    const redisReply* r = replies[k].get();
    if (!reply_is_error(r)) {
      out[sent[k]].id = reply_string(r);
      continue;
    }
    const std::string text = reply_string(r);
    // LOADING/BUSY pass; anything else (OOM, wrong type) will not.
    const bool retryable = text.rfind("LOADING", 0) == 0 || text.rfind("BUSY", 0) == 0 || text.rfind("OOM", 0) == 0;
    out[sent[k]].failure = ports::EntryFailure{retryable, url_ + ": XADD: " + text};
  }
  return out;
}

std::vector<Message> RedisQueue::receive(std::size_t max, std::chrono::milliseconds wait) {
  if (max == 0 || max > kMaxQueueBatch)
    throw QueueError(url_ + ": receive takes 1 to 10 messages, asked " + std::to_string(max), ports::Failure::permanent);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    std::string last_id;
    auto messages = with_retry("receive", [&](RedisConnection& conn, int) {
      Reply r;
      const std::vector<std::string> args{config_.stream, dlq_stream_, config_.group, consumer_, std::to_string(max),
                                          std::to_string(config_.visibility.count()), std::to_string(config_.max_receives),
                                          now_arg()};
      try {
        r = run_script(conn, kReceive, args, 2);
      } catch (const RedisServerError& e) {
        if (!mentions(e, "NOGROUP")) throw;
        ensure_group(conn);  // the stream was deleted under us; start again from an empty group
        r = run_script(conn, kReceive, args, 2);
      }
      std::vector<Message> out;
      const std::size_t n = reply_size(r.get());
      last_id = n >= 2 ? reply_string(reply_at(r.get(), 1, url_)) : "";
      for (std::size_t i = 2; i + 2 < n; i += 3) {
        Message m;
        m.id = reply_string(reply_at(r.get(), i, url_));
        m.receive_count = static_cast<int>(reply_integer(reply_at(r.get(), i + 1, url_), url_ + ": receive"));
        m.body = reply_string(reply_at(r.get(), i + 2, url_));
        m.receipt = m.id + ":" + std::to_string(m.receive_count);
        out.push_back(std::move(m));
      }
      return out;
    });
    if (!messages.empty() || wait.count() <= 0) return messages;
    const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (remaining.count() <= 0 || last_id.empty()) return messages;
    // Wait for the next entry without taking it (the script takes it on the next pass). Bounded,
    // so entries whose visibility ends meanwhile are picked up too.
    const auto block = std::max(std::chrono::milliseconds(1), std::min(remaining, config_.block_max));
    with_retry("receive", [&](RedisConnection& conn, int) {
      conn.command({"XREAD", "BLOCK", std::to_string(block.count()), "COUNT", "1", "STREAMS", config_.stream, last_id},
                   block + config_.call_timeout);
      return 0;
    });
  }
}

std::vector<std::string> RedisQueue::delete_batch(std::span<const std::string> receipts) {
  if (receipts.size() > kMaxQueueBatch)
    throw QueueError(url_ + ": delete_batch takes at most 10 receipts, got " + std::to_string(receipts.size()),
                     ports::Failure::permanent);
  if (std::set<std::string>(receipts.begin(), receipts.end()).size() != receipts.size())
    throw QueueError(url_ + ": delete_batch got the same receipt twice", ports::Failure::permanent);
  std::vector<std::string> failed;
  std::vector<std::string> args{config_.stream, config_.group, "0"};
  std::vector<std::size_t> sent;  // index into receipts of each pair sent
  for (std::size_t i = 0; i < receipts.size(); ++i) {
    std::string id;
    long long count = 0;
    if (!parse_redis_receipt(receipts[i], id, count)) {
      failed.push_back(receipts[i]);
      continue;
    }
    args.push_back(id);
    args.push_back(std::to_string(count));
    sent.push_back(i);
  }
  if (sent.empty()) return failed;
  auto stale = with_retry("delete", [&](RedisConnection& conn, int attempt) {
    args[2] = attempt > 0 ? "1" : "0";  // a retry may follow a delete whose reply was lost
    auto r = run_script(conn, kDelete, args, 1);
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < reply_size(r.get()); ++i)
      out.push_back(static_cast<std::size_t>(reply_integer(reply_at(r.get(), i, url_), url_ + ": delete")));
    return out;
  });
  for (std::size_t k : stale)
    if (k >= 1 && k <= sent.size()) failed.push_back(receipts[sent[k - 1]]);
  return failed;
}

std::vector<std::string> RedisQueue::change_visibility_batch(std::span<const std::string> receipts,
                                                             std::chrono::milliseconds timeout) {
  if (receipts.size() > kMaxQueueBatch)
    throw QueueError(url_ + ": change_visibility_batch takes at most 10 receipts, got " + std::to_string(receipts.size()),
                     ports::Failure::permanent);
  const auto t = std::clamp<std::int64_t>(timeout.count(), 0, kRedisTimeHeadroomMs);
  std::vector<std::string> stale;
  for (const auto& receipt : receipts) {
    std::string id;
    long long count = 0;
    if (!parse_redis_receipt(receipt, id, count)) {
      stale.push_back(receipt);
      continue;
    }
    // Idempotent (it sets an absolute deadline), so a retry after a lost reply is harmless.
    const bool current = with_retry("change_visibility", [&](RedisConnection& conn, int) {
      auto r = run_script(conn, kVisibility,
                          {config_.stream, config_.group, id, std::to_string(count),
                           std::to_string(config_.visibility.count()), std::to_string(t), now_arg()},
                          1);
      return reply_integer(r.get(), url_ + ": change_visibility") == 1;
    });
    if (!current) stale.push_back(receipt);
  }
  return stale;
}

ports::QueueCounts RedisQueue::counts() {
  return with_retry("counts", [&](RedisConnection& conn, int) {
    auto replies = conn.pipeline({{"XLEN", config_.stream}, {"XPENDING", config_.stream, config_.group}});
    for (auto& r : replies)
      if (reply_is_error(r.get())) throw RedisServerError(url_ + ": counts: " + reply_string(r.get()));
    const auto length = static_cast<std::size_t>(reply_integer(replies[0].get(), url_ + ": XLEN"));
    const auto pending = static_cast<std::size_t>(reply_integer(reply_at(replies[1].get(), 0, url_), url_ + ": XPENDING"));
    ports::QueueCounts c;
    c.in_flight = pending;
    c.visible = length > pending ? length - pending : 0;
    return c;
  });
}

ports::QueueStatus RedisQueue::status() {
  return with_retry("status", [&](RedisConnection& conn, int) {
    auto replies = conn.pipeline({{"XLEN", config_.stream},
                                  {"XPENDING", config_.stream, config_.group},
                                  {"XLEN", dlq_stream_},
                                  {"XRANGE", config_.stream, "-", "+", "COUNT", "1"},
                                  {"TIME"},
                                  {"XINFO", "CONSUMERS", config_.stream, config_.group}});
    // XINFO CONSUMERS (the last) fails only when the group is gone; the consumer count is then unknown.
    for (std::size_t i = 0; i + 1 < replies.size(); ++i)
      if (reply_is_error(replies[i].get())) throw RedisServerError(url_ + ": status: " + reply_string(replies[i].get()));
    const auto length = static_cast<std::size_t>(reply_integer(replies[0].get(), url_ + ": XLEN"));
    const auto pending =
        static_cast<std::size_t>(reply_integer(reply_at(replies[1].get(), 0, url_), url_ + ": XPENDING"));
    ports::QueueStatus s;
    s.counts.in_flight = pending;
    s.counts.visible = length > pending ? length - pending : 0;
    // The dead-letter stream is never read by a group, so every entry in it is waiting.
    if (config_.max_receives > 0)
      s.dead_letters = ports::QueueCounts{static_cast<std::size_t>(reply_integer(replies[2].get(), url_ + ": XLEN")), 0};
    if (reply_size(replies[3].get()) > 0) {
      // An entry id is "<ms since epoch>-<seq>" of the server's clock, so its age needs the server's TIME.
      const std::string id = reply_string(reply_at(reply_at(replies[3].get(), 0, url_), 0, url_));
      const long long first_ms = std::stoll(id.substr(0, id.find('-')));
      const long long server_ms = std::stoll(reply_string(reply_at(replies[4].get(), 0, url_))) * 1000 +
                                  std::stoll(reply_string(reply_at(replies[4].get(), 1, url_))) / 1000;
      s.oldest_age = std::chrono::milliseconds(std::max(0LL, server_ms - first_ms));
    }
    if (!reply_is_error(replies[5].get())) s.consumers = reply_size(replies[5].get());
    return s;
  });
}

std::shared_ptr<ports::Queue> RedisQueue::dead_letter_queue() {
  if (config_.max_receives <= 0) return nullptr;
  std::lock_guard lock(dlq_mutex_);
  if (!dead_letters_) {
    RedisQueueConfig c = config_;
    c.stream = dlq_stream_;
    c.max_receives = 0;
    c.is_dead_letter = true;
    const auto q = url_.find('?');
    std::string dlq_url = url_.substr(0, q);
    const auto slash = dlq_url.rfind('/');
    dlq_url = dlq_url.substr(0, slash + 1) + dlq_stream_;
    dead_letters_ = std::make_shared<RedisQueue>(dlq_url, std::move(c), clock_);
  }
  return dead_letters_;
}

bool RedisQueue::send_to_dead_letters(const std::string& receipt, const std::string& body, const std::string& reason) {
  if (config_.max_receives <= 0) return false;
  std::string id;
  long long count = 0;
  if (!parse_redis_receipt(receipt, id, count)) {
    id = "";
    count = 0;
  }
  with_retry("dead letter", [&](RedisConnection& conn, int) {
    return conn.command({"XADD", dlq_stream_, "*", "b", body, "reason", reason, "receives", std::to_string(count), "source", id},
                        config_.call_timeout);
  });
  return true;
}

std::shared_ptr<ports::Queue> open_redis_queue(const ports::BackendUrl& u, const ports::ClockMs& clock) {
  u.check_params({"group", "visibility_ms", "max_receives", "max_message_bytes", "timeout_ms", "block_ms", "retry_ms",
                  "db", "connect_timeout_ms"});
  if (!u.has_authority || u.host.empty())
    throw std::invalid_argument(u.describe("queue", "expected redis://[USER:PASSWORD@]HOST[:PORT]/STREAM"));
  RedisQueueConfig c;
  c.endpoint.host = u.host;
  c.endpoint.port = u.port == 0 ? 6379 : u.port;
  c.endpoint.user = u.user;
  c.endpoint.password = u.password;
  c.endpoint.db = static_cast<int>(u.int_param("db", 0, 0, 1 << 20));
  c.endpoint.shown = u.redacted();
  c.stream = u.path.starts_with('/') ? u.path.substr(1) : u.path;
  if (c.stream.empty() || c.stream.find('/') != std::string::npos)
    throw std::invalid_argument(u.describe("queue", "expected one stream name after the host (redis://HOST:PORT/STREAM)"));
  c.group = u.param("group", "overhead");
  c.visibility = std::chrono::milliseconds(u.int_param("visibility_ms", 30000, 0, ports::kMaxVisibilityMs));
  c.max_receives = static_cast<int>(u.int_param("max_receives", 0, 0, ports::kMaxReceivesBound));
  c.max_message_bytes = static_cast<std::size_t>(
      u.int_param("max_message_bytes", ports::kDefaultMaxMessageBytes, 1, ports::kMaxMessageBytesBound));
  c.call_timeout = u.call_timeout();
  c.block_max = std::chrono::milliseconds(u.int_param("block_ms", 1000, 1, 60000));
  c.retry = std::chrono::milliseconds(u.int_param("retry_ms", c.call_timeout.count(), 0, 3600LL * 1000));
  c.endpoint.connect_timeout = std::chrono::milliseconds(u.int_param("connect_timeout_ms", 3000, 1, 60000));
  return std::make_shared<RedisQueue>(u.redacted(), std::move(c), clock);
}

}  // namespace overhead::backends
