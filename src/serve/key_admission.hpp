// A request's admission by its key, before anything is queued: who is calling (api_keys.hpp),
// whether the key may use the model, whether its budget is spent (key_spend.hpp), and whether its
// requests and tokens per minute allow it (ports/rate_limiter.hpp: in-process or shared on Redis).
// The prompt tokens are the exact count of the rendered prompt (prompt_tokens.hpp), known here
// before the request is queued. After the answer, its completion tokens are charged to the
// key's token window, its cost to its spend, and both to the per-key metrics.
//
// Refusals, in OpenAI's shapes: 401 invalid_api_key (no, unknown, revoked or expired key), 403
// model_not_allowed, 429 rate_limit_exceeded naming the limit (requests or tokens) with Retry-After,
// 429 insufficient_quota for a spent budget (with x-should-retry: false, which the openai SDKs
// honour: retrying cannot help until the budget is raised). Every answer of a limited key carries
// x-ratelimit-limit-{requests,tokens}, x-ratelimit-remaining-{requests,tokens} and
// x-ratelimit-reset-{requests,tokens} as OpenAI sends them.
//
// When the limiter cannot answer (Redis unreachable): --limits-on-error open (the default: the
// request is admitted, the failure counted; the limits protect capacity, and an outage of the
// counters should not become an outage of the gateway) or closed (503 limits_unavailable).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ports/rate_limiter.hpp"
#include "serve/api_error.hpp"
#include "serve/api_keys.hpp"

namespace overhead::serve {

namespace http {
class Response;
}
class KeyMetrics;
class KeySpend;

enum class LimitsOnError { open, closed };
// "open" or "closed"; throws std::invalid_argument naming the value otherwise.
[[nodiscard]] LimitsOnError parse_limits_on_error(std::string_view text);

// What an admitted request carries to its answer.
struct KeyGrant {
  std::string key_name;  // empty: no key (an open gateway)
  std::optional<ports::LimitDecision> limits;  // set when the key has a limit
  std::int64_t rpm = 0, tpm = 0;
};

class KeyAdmission {
 public:
  KeyAdmission(ApiKeys& keys, KeySpend& spend, std::shared_ptr<ports::RateLimiter> limiter, KeyMetrics& metrics,
               LimitsOnError on_error);

  [[nodiscard]] Caller caller(std::string_view authorization) const;
  // The name of the caller's key: what owns the files, uploads and batches it makes, and all it
  // may see of them. Empty on a gateway without keys (everything is everyone's).
  [[nodiscard]] std::string owner(std::string_view authorization) const {
    const Caller c = caller(authorization);
    return c.key ? c.key->name : std::string();
  }
  // Whether the caller's admission needs the prompt's token count (its key has a token limit).
  [[nodiscard]] static bool needs_prompt_tokens(const Caller& caller) { return caller.key && caller.key->tpm > 0; }
  // Admits `caller` (ok) for `model` and `prompt_tokens`, or returns the refusal. Sets the rate
  // headers on `res` either way, and Retry-After / x-should-retry on a refusal.
  [[nodiscard]] std::optional<ApiError> admit(const Caller& caller, const std::string& model, std::int64_t prompt_tokens,
                                              http::Response& res, KeyGrant& grant);
  // The parts of admit() that other routes use alone (the Batch API: a batch is created under its
  // key's model list and budget, and its items are charged to the key's spend, not to its
  // per-minute windows). Each returns the refusal, counted in the key's metrics.
  [[nodiscard]] std::optional<ApiError> check_model(const ports::ApiKey& key, const std::string& model);
  [[nodiscard]] std::optional<ApiError> check_budget(const ports::ApiKey& key, http::Response& res);
  // An answered request of `key_name`: completion tokens to its token window, cost to its spend.
  void answered(const std::string& key_name, std::int64_t tpm, std::int64_t prompt_tokens, std::int64_t completion_tokens,
                double cost_usd);
  [[nodiscard]] std::uint64_t limiter_failures() const { return limiter_failures_.load(); }
  [[nodiscard]] const ports::RateLimiter& limiter() const { return *limiter_; }

 private:
  ApiKeys& keys_;
  KeySpend& spend_;
  std::shared_ptr<ports::RateLimiter> limiter_;
  KeyMetrics& metrics_;
  LimitsOnError on_error_;
  std::atomic<std::uint64_t> limiter_failures_{0};
};

// A duration as OpenAI's reset headers write it (Go's style): "20ms", "1s", "1.5s", "6m0s".
[[nodiscard]] std::string reset_duration(std::chrono::milliseconds d);
void set_rate_headers(http::Response& res, const KeyGrant& grant);

}  // namespace overhead::serve
