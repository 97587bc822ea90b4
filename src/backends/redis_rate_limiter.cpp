#include "backends/redis_rate_limiter.hpp"

#include <stdexcept>

#include <hiredis/hiredis.h>

#include "ports/backend_url.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

namespace {

// KEYS[1]: the key's hash. ARGV: window_ms, rpm, tpm, tokens, mode ("admit" or "charge").
// The hash holds the current window's number (i) and the previous and current counts of
// requests (rp, rc) and tokens (tp, tc). Returns {admitted, elapsed_ms, rp, rc, tp, tc}: the
// caller computes what is left and the waits with the same arithmetic (ports/rate_limiter.cpp).
// TIME in a script is allowed since Redis 5 with effects replication, the default from 7.
constexpr const char* kLimitScript = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local w = tonumber(ARGV[1])
local rpm, tpm, cost = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local idx = math.floor(now / w)
local e = now - idx * w
local h = redis.call('HMGET', KEYS[1], 'i', 'rp', 'rc', 'tp', 'tc')
local i = tonumber(h[1]) or idx
local rp, rc, tp, tc = tonumber(h[2]) or 0, tonumber(h[3]) or 0, tonumber(h[4]) or 0, tonumber(h[5]) or 0
if i ~= idx then
  if i == idx - 1 then rp, tp = rc, tc else rp, tp = 0, 0 end
  rc, tc = 0, 0
end
local admitted = 1
if ARGV[5] == 'charge' then
  tc = tc + cost
else
  local f = 1 - e / w
  if (rpm > 0 and math.floor(rp * f) + rc + 1 > rpm) or (tpm > 0 and math.floor(tp * f) + tc + cost > tpm) then
    admitted = 0
  else
    rc, tc = rc + 1, tc + cost
  end
end
redis.call('HSET', KEYS[1], 'i', idx, 'rp', rp, 'rc', rc, 'tp', tp, 'tc', tc)
redis.call('PEXPIRE', KEYS[1], 2 * w)
return {admitted, e, rp, rc, tp, tc}
)lua";

bool mentions_noscript(const std::exception& e) { return std::string(e.what()).find("NOSCRIPT") != std::string::npos; }

}  // namespace

RedisRateLimiter::RedisRateLimiter(RedisEndpoint endpoint, std::string prefix, std::chrono::milliseconds window,
                                   std::chrono::milliseconds call_timeout)
    : endpoint_(std::move(endpoint)), prefix_(std::move(prefix)), window_(window), call_timeout_(call_timeout) {
  RedisConnection conn(endpoint_);  // a bad host or password fails here, with one clear line
  sha_ = reply_string(conn.command({"SCRIPT", "LOAD", kLimitScript}, call_timeout_).get());
}

std::vector<long long> RedisRateLimiter::run(const std::string& key, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"EVALSHA", sha_, "1", prefix_ + "{" + key + "}"};
  argv.insert(argv.end(), args.begin(), args.end());
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<RedisConnection> conn;
    {
      std::lock_guard lock(pool_mutex_);
      if (!idle_.empty()) {
        conn = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    try {
      if (!conn) conn = std::make_unique<RedisConnection>(endpoint_);
      Reply reply;
      try {
        reply = conn->command(argv, call_timeout_);
      } catch (const RedisServerError& e) {
        if (!mentions_noscript(e)) throw;
        conn->command({"SCRIPT", "LOAD", kLimitScript}, call_timeout_);  // a restarted server forgot it
        reply = conn->command(argv, call_timeout_);
      }
      std::vector<long long> out;
      for (std::size_t k = 0; k < reply_size(reply.get()); ++k)
        out.push_back(reply_integer(reply_at(reply.get(), k, "limit script"), "limit script"));
      if (out.size() != 6) throw RedisServerError(endpoint_.shown + ": the limit script returned " + std::to_string(out.size()) + " values");
      {
        std::lock_guard lock(pool_mutex_);
        if (conn->healthy() && idle_.size() < 16) idle_.push_back(std::move(conn));
      }
      return out;
    } catch (const RedisIoError& e) {
      // One fresh connection more: a server restart drops every pooled one at once.
      if (attempt == 0) {
        std::lock_guard lock(pool_mutex_);
        idle_.clear();
        continue;
      }
      throw ports::QueueError(endpoint_.shown + ": rate limits: Redis unreachable: " + e.what(), ports::Failure::transient);
    }
  }
}

ports::LimitDecision RedisRateLimiter::admit(const ports::LimitAsk& per_minute) {
  if (per_minute.rpm <= 0 && per_minute.tpm <= 0) return {};
  ports::LimitAsk ask = per_minute;
  ask.rpm = ports::per_window(ask.rpm, window_);
  ask.tpm = ports::per_window(ask.tpm, window_);
  const auto r = run(ask.key, {std::to_string(window_.count()), std::to_string(ask.rpm), std::to_string(ask.tpm),
                               std::to_string(ask.tokens), "admit"});
  return ports::window_decision(r[0] == 1, ask, {r[2], r[3]}, {r[4], r[5]}, std::chrono::milliseconds(r[1]), window_);
}

void RedisRateLimiter::charge(const std::string& key, std::int64_t tokens) {
  if (tokens <= 0) return;
  (void)run(key, {std::to_string(window_.count()), "0", "0", std::to_string(tokens), "charge"});
}

std::shared_ptr<ports::RateLimiter> open_rate_limiter(const std::string& url, std::chrono::milliseconds default_window) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  if (u.scheme != "redis")
    throw std::invalid_argument(u.describe("rate limits", "expected redis://[USER:PASSWORD@]HOST[:PORT][/PREFIX] (the counters every gateway shares)"));
  u.check_params({"db", "timeout_ms", "window_ms", "connect_timeout_ms"});
  if (!u.has_authority || u.host.empty())
    throw std::invalid_argument(u.describe("rate limits", "expected redis://[USER:PASSWORD@]HOST[:PORT][/PREFIX]"));
  RedisEndpoint e;
  e.host = u.host;
  e.port = u.port == 0 ? 6379 : u.port;
  e.user = u.user;
  e.password = u.password;
  e.db = static_cast<int>(u.int_param("db", 0, 0, 1 << 20));
  e.shown = u.redacted();
  e.connect_timeout = std::chrono::milliseconds(u.int_param("connect_timeout_ms", 1000, 1, 60000));
  std::string prefix = u.path.starts_with('/') ? u.path.substr(1) : u.path;
  if (prefix.empty()) prefix = "overhead:limits:";
  const std::chrono::milliseconds window(u.int_param("window_ms", default_window.count(), 100, 3600LL * 1000));
  return std::make_shared<RedisRateLimiter>(std::move(e), std::move(prefix), window, u.call_timeout());
}

}  // namespace overhead::backends
