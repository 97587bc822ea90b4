// One synchronous connection to a Redis server (hiredis): connect with a timeout, AUTH, SELECT,
// single commands and pipelines of commands sent in one write and read back in order.
// Errors are split by what the caller can do about them: RedisIoError (the connection is gone:
// reconnect and retry) and RedisServerError (the server refused the command: retrying will not help).
// Messages name the endpoint by its redacted URL, never the password.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ports/errors.hpp"

struct redisContext;
struct redisReply;

namespace overhead::backends {

// Transient: the same call on a fresh connection may succeed.
class RedisIoError : public ports::QueueError {
 public:
  explicit RedisIoError(const std::string& what) : ports::QueueError(what, ports::Failure::transient) {}
};

// Permanent: the server refused the command (bad credentials, wrong type, script error).
class RedisServerError : public ports::QueueError {
 public:
  explicit RedisServerError(const std::string& what) : ports::QueueError(what, ports::Failure::permanent) {}
};

struct RedisEndpoint {
  std::string host;
  int port = 6379;
  std::string user;      // empty = the default user
  std::string password;  // empty = no AUTH
  int db = 0;
  std::string shown;     // redacted URL for messages
  std::chrono::milliseconds connect_timeout{3000};
};

struct ReplyDeleter {
  void operator()(redisReply* r) const;
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

class RedisConnection {
 public:
  // Connects and authenticates; throws RedisIoError when unreachable, RedisServerError when the
  // server refuses the credentials or the database.
  explicit RedisConnection(const RedisEndpoint& endpoint);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  // Sends one command and returns its reply. An error reply throws RedisServerError.
  // `read_timeout` bounds the wait for the reply (blocking commands pass their block time plus a margin).
  Reply command(const std::vector<std::string>& argv, std::chrono::milliseconds read_timeout = std::chrono::milliseconds(10000));
  // Sends all commands in one write and returns their replies in order (one round trip). Error
  // replies are returned, not thrown, so the caller can tell which entry failed.
  std::vector<Reply> pipeline(const std::vector<std::vector<std::string>>& commands,
                              std::chrono::milliseconds read_timeout = std::chrono::milliseconds(10000));
  // False after an I/O error: the connection must not be used again.
  bool healthy() const { return healthy_; }

 private:
  void set_timeout(std::chrono::milliseconds t);
  [[noreturn]] void fail_io(const std::string& what);

  RedisEndpoint endpoint_;
  redisContext* ctx_ = nullptr;
  bool healthy_ = false;
  std::chrono::milliseconds timeout_{0};
};

// Accessors over a reply, throwing RedisServerError (naming `what`) when the shape is unexpected.
bool reply_is_error(const redisReply* r);
std::string reply_string(const redisReply* r);  // string, status or error text
long long reply_integer(const redisReply* r, const std::string& what);
std::size_t reply_size(const redisReply* r);     // array elements; 0 for nil
const redisReply* reply_at(const redisReply* r, std::size_t i, const std::string& what);

}  // namespace overhead::backends
