#include "backends/redis_connection.hpp"

#include <hiredis/hiredis.h>

#include <sys/time.h>

namespace overhead::backends {

void ReplyDeleter::operator()(redisReply* r) const {
  if (r) freeReplyObject(r);
}

namespace {
timeval to_timeval(std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  return tv;
}
}  // namespace

RedisConnection::RedisConnection(const RedisEndpoint& endpoint) : endpoint_(endpoint) {
  ctx_ = redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, to_timeval(endpoint_.connect_timeout));
  if (!ctx_) throw RedisIoError(endpoint_.shown + ": cannot allocate a Redis connection");
  if (ctx_->err) {
    const std::string reason = ctx_->errstr;
    redisFree(ctx_);
    ctx_ = nullptr;
    throw RedisIoError(endpoint_.shown + ": cannot connect to " + endpoint_.host + ":" + std::to_string(endpoint_.port) +
                       ": " + reason);
  }
  healthy_ = true;
  try {
    if (!endpoint_.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!endpoint_.user.empty()) auth.push_back(endpoint_.user);
      auth.push_back(endpoint_.password);
      try {
        command(auth);
      } catch (const RedisServerError&) {
        // The server's own text can echo arguments in some versions; say only what happened.
        throw RedisServerError(endpoint_.shown + ": authentication failed (wrong user or password)");
      }
    }
    if (endpoint_.db != 0) command({"SELECT", std::to_string(endpoint_.db)});
  } catch (...) {
    redisFree(ctx_);
    ctx_ = nullptr;
    throw;
  }
}

RedisConnection::~RedisConnection() {
  if (ctx_) redisFree(ctx_);
}

void RedisConnection::set_timeout(std::chrono::milliseconds t) {
  if (t == timeout_) return;
  if (redisSetTimeout(ctx_, to_timeval(t)) != REDIS_OK) fail_io("cannot set the socket timeout");
  timeout_ = t;
}

void RedisConnection::fail_io(const std::string& what) {
  healthy_ = false;
  throw RedisIoError(endpoint_.shown + ": " + what + (ctx_ && ctx_->err ? std::string(": ") + ctx_->errstr : ""));
}

Reply RedisConnection::command(const std::vector<std::string>& argv, std::chrono::milliseconds read_timeout) {
  auto replies = pipeline({argv}, read_timeout);
  Reply r = std::move(replies.front());
  if (reply_is_error(r.get()))
    throw RedisServerError(endpoint_.shown + ": " + argv.front() + ": " + reply_string(r.get()));
  return r;
}

std::vector<Reply> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands,
                                             std::chrono::milliseconds read_timeout) {
  if (!healthy_) fail_io("connection is closed");
  set_timeout(read_timeout);
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const auto& argv : commands) {
    args.clear();
    lens.clear();
    for (const auto& a : argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_, static_cast<int>(args.size()), args.data(), lens.data()) != REDIS_OK)
      fail_io("cannot queue a command");
  }
  std::vector<Reply> out;
  out.reserve(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || !raw) fail_io("connection lost");
    out.emplace_back(static_cast<redisReply*>(raw));
  }
  return out;
}

bool reply_is_error(const redisReply* r) { return r && r->type == REDIS_REPLY_ERROR; }

std::string reply_string(const redisReply* r) {
  if (!r) return {};
  if (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR)
    return std::string(r->str, r->len);
  if (r->type == REDIS_REPLY_INTEGER) return std::to_string(r->integer);
  return {};
}

long long reply_integer(const redisReply* r, const std::string& what) {
  if (r && r->type == REDIS_REPLY_INTEGER) return r->integer;
  if (r && r->type == REDIS_REPLY_STRING) {
    try {
      return std::stoll(std::string(r->str, r->len));
    } catch (const std::exception&) {
    }
  }
  throw RedisServerError(what + ": unexpected reply (expected an integer)");
}

std::size_t reply_size(const redisReply* r) { return r && r->type == REDIS_REPLY_ARRAY ? r->elements : 0; }

const redisReply* reply_at(const redisReply* r, std::size_t i, const std::string& what) {
  if (!r || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
    throw RedisServerError(what + ": unexpected reply shape");
  return r->element[i];
}

}  // namespace overhead::backends
