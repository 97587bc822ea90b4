#include "backends/sqlite_queue.hpp"

#include <charconv>
#include <stdexcept>
#include <thread>

#include "ports/errors.hpp"
#include "backends/receipt.hpp"

namespace overhead::backends {


using ports::BackendUrl;
using ports::check_send_batch;
using ports::ClockMs;
using ports::kDefaultMaxMessageBytes;
using ports::kMaxMessageBytesBound;
using ports::kMaxQueueBatch;
using ports::kMaxReceivesBound;
using ports::kMaxVisibilityMs;
using ports::Message;
using ports::Queue;
using ports::QueueCounts;
using ports::QueueError;
using ports::SendOutcome;
using ports::StoreError;
using ports::wall_ms;

namespace {
// Runs fn inside BEGIN IMMEDIATE ... COMMIT (rolled back on an exception), turning storage
// errors into QueueError. IMMEDIATE takes the write lock up front, so two workers never
// receive the same message.
template <class Fn>
auto in_transaction(SqliteDb& db, Fn&& fn) {
  try {
    db.exec("BEGIN IMMEDIATE");
    try {
      auto result = fn();
      db.exec("COMMIT");
      return result;
    } catch (...) {
      db.exec("ROLLBACK");
      throw;
    }
  } catch (const StoreError& e) {
    throw QueueError(e.what(), e.failure());
  }
}
}  // namespace

SqliteQueue::SqliteQueue(std::string url, const std::string& path, std::string name,
                         std::chrono::milliseconds visibility, int max_receives, ClockMs clock, Limits limits)
    : url_(std::move(url)), path_(path), name_(std::move(name)), visibility_(visibility),
      max_receives_(max_receives), limits_(limits),
      clock_(clock ? std::move(clock) : ClockMs(&wall_ms)), db_(path, url_, limits.call_timeout),
      rng_(std::random_device{}()) {
  db_.exec(
      "CREATE TABLE IF NOT EXISTS queue_messages ("
      " seq INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL, body TEXT NOT NULL,"
      " visible_at INTEGER NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0, nonce INTEGER NOT NULL DEFAULT 0);"
      "CREATE INDEX IF NOT EXISTS queue_messages_ready ON queue_messages(queue, visible_at, seq);");
  insert_ = db_.prepare("INSERT INTO queue_messages(queue, body, visible_at) VALUES(?1, ?2, 0)");
  select_visible_ = db_.prepare(
      "SELECT seq, body, receive_count FROM queue_messages WHERE queue = ?1 AND visible_at <= ?2 ORDER BY seq LIMIT ?3");
  mark_received_ = db_.prepare("UPDATE queue_messages SET visible_at = ?2, receive_count = receive_count + 1, nonce = ?3 WHERE seq = ?1");
  move_dead_ = db_.prepare("UPDATE queue_messages SET queue = ?2, visible_at = 0, receive_count = 0, nonce = 0 WHERE seq = ?1");
  delete_ = db_.prepare("DELETE FROM queue_messages WHERE seq = ?1 AND nonce = ?2 AND queue = ?3");
  change_vis_ = db_.prepare("UPDATE queue_messages SET visible_at = ?3 WHERE seq = ?1 AND nonce = ?2 AND queue = ?4 AND visible_at > ?5");
  count_ = db_.prepare("SELECT COALESCE(SUM(visible_at <= ?2), 0), COALESCE(SUM(visible_at > ?2), 0) FROM queue_messages WHERE queue = ?1");
}

std::vector<SendOutcome> SqliteQueue::send_batch(std::span<const std::string> bodies) {
  auto checks = check_send_batch(bodies, limits_.max_message_bytes, url_);
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    std::vector<SendOutcome> out(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (checks[i]) {
        out[i].failure = std::move(checks[i]);
        continue;
      }
      insert_.bind(1, name_).bind(2, bodies[i]).run();
      out[i].id = std::to_string(db_.last_insert_rowid());
    }
    return out;
  });
}

std::vector<Message> SqliteQueue::receive_once(std::size_t max) {
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    std::vector<Message> out;
    const std::string dead_name = name_ + "-dlq";
    for (;;) {
      const std::int64_t now = clock_();
      struct Row { std::int64_t seq; std::string body; int count; };
      std::vector<Row> rows;
      select_visible_.bind(1, name_).bind(2, now).bind(3, static_cast<std::int64_t>(max - out.size()));
      while (select_visible_.step())
        rows.push_back(Row{select_visible_.column_int(0), std::string(select_visible_.column_text(1)),
                           static_cast<int>(select_visible_.column_int(2))});
      select_visible_.reset();
      if (rows.empty()) break;
      bool moved = false;
      for (auto& row : rows) {
        if (max_receives_ > 0 && row.count >= max_receives_) {
          move_dead_.bind(1, row.seq).bind(2, dead_name).run();
          moved = true;
          continue;
        }
        const auto nonce = static_cast<std::int64_t>(rng_() >> 1) | 1;
        mark_received_.bind(1, row.seq).bind(2, now + visibility_.count()).bind(3, nonce).run();
        out.push_back(Message{std::to_string(row.seq), std::to_string(row.seq) + ":" + std::to_string(nonce),
                              std::move(row.body), row.count + 1});
      }
      if (!moved || out.size() >= max) break;  // refill only the slots that dead letters took
    }
    return out;
  });
}

std::vector<Message> SqliteQueue::receive(std::size_t max, std::chrono::milliseconds wait) {
  if (max == 0 || max > kMaxQueueBatch)
    throw QueueError(url_ + ": receive takes 1 to 10 messages, asked " + std::to_string(max));
  // Long polling by short sleeps: other processes write the file, so there is nothing to wait on.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto pause = std::chrono::milliseconds(2);
  for (;;) {
    auto out = receive_once(max);
    if (!out.empty() || std::chrono::steady_clock::now() >= deadline) return out;
    std::this_thread::sleep_for(std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()) + std::chrono::milliseconds(1)));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::vector<std::string> SqliteQueue::delete_batch(std::span<const std::string> receipts) {
  if (receipts.size() > kMaxQueueBatch)
    throw QueueError(url_ + ": delete_batch takes at most 10 receipts, got " + std::to_string(receipts.size()));
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    std::vector<std::string> failed;
    for (const auto& r : receipts) {
      std::int64_t seq = 0, nonce = 0;
      if (!parse_receipt(r, seq, nonce)) {
        failed.push_back(r);
        continue;
      }
      delete_.bind(1, seq).bind(2, nonce).bind(3, name_).run();
      if (db_.changes() == 0) failed.push_back(r);
    }
    return failed;
  });
}

std::vector<std::string> SqliteQueue::change_visibility_batch(std::span<const std::string> receipts,
                                                              std::chrono::milliseconds timeout) {
  if (receipts.size() > kMaxQueueBatch)
    throw QueueError(url_ + ": change_visibility_batch takes at most 10 receipts, got " + std::to_string(receipts.size()));
  std::lock_guard lock(mutex_);
  return in_transaction(db_, [&] {
    std::vector<std::string> failed;
    const std::int64_t now = clock_();
    for (const auto& r : receipts) {
      std::int64_t seq = 0, nonce = 0;
      if (!parse_receipt(r, seq, nonce)) {
        failed.push_back(r);
        continue;
      }
      change_vis_.bind(1, seq).bind(2, nonce).bind(3, now + timeout.count()).bind(4, name_).bind(5, now).run();
      if (db_.changes() == 0) failed.push_back(r);
    }
    return failed;
  });
}

QueueCounts SqliteQueue::counts() {
  std::lock_guard lock(mutex_);
  try {
    count_.bind(1, name_).bind(2, clock_());
    QueueCounts c;
    if (count_.step()) {
      c.visible = static_cast<std::size_t>(count_.column_int(0));
      c.in_flight = static_cast<std::size_t>(count_.column_int(1));
    }
    count_.reset();
    return c;
  } catch (const StoreError& e) {
    count_.reset();
    throw QueueError(e.what(), e.failure());
  }
}

std::shared_ptr<Queue> open_sqlite_queue(const BackendUrl& u, const ClockMs& clock) {
  u.check_params({"name", "visibility_ms", "max_receives", "max_message_bytes", "timeout_ms"});
  if (u.path.empty()) throw std::invalid_argument(u.describe("queue", "expected sqlite-queue:PATH"));
  SqliteQueue::Limits limits;
  limits.max_message_bytes = static_cast<std::size_t>(u.int_param("max_message_bytes", kDefaultMaxMessageBytes, 1, kMaxMessageBytesBound));
  limits.call_timeout = u.call_timeout();
  return std::make_shared<SqliteQueue>(u.redacted(), u.path, u.param("name", "queue"),
                                       std::chrono::milliseconds(u.int_param("visibility_ms", 30000, 0, kMaxVisibilityMs)),
                                       static_cast<int>(u.int_param("max_receives", 0, 0, kMaxReceivesBound)), clock, limits);
}

std::shared_ptr<Queue> SqliteQueue::dead_letter_queue() {
  if (max_receives_ <= 0) return nullptr;
  std::lock_guard lock(mutex_);
  if (!dead_letters_)
    dead_letters_ = std::make_shared<SqliteQueue>("sqlite-queue:" + path_ + "?name=" + name_ + "-dlq", path_,
                                                  name_ + "-dlq", visibility_, 0, clock_, limits_);
  return dead_letters_;
}

}  // namespace overhead::backends
