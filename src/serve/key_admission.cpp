#include "serve/key_admission.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <stdexcept>

#include "serve/http/message.hpp"
#include "serve/key_metrics.hpp"
#include "serve/key_spend.hpp"

namespace overhead::serve {

LimitsOnError parse_limits_on_error(std::string_view text) {
  if (text == "open") return LimitsOnError::open;
  if (text == "closed") return LimitsOnError::closed;
  throw std::invalid_argument("--limits-on-error: expected open or closed, got \"" + std::string(text) + "\"");
}

std::string reset_duration(std::chrono::milliseconds d) {
  const std::int64_t ms = std::max<std::int64_t>(d.count(), 0);
  if (ms < 1000) return std::to_string(ms) + "ms";
  const std::int64_t minutes = ms / 60000;
  const std::int64_t rest_ms = ms % 60000;
  char seconds[32];
  if (rest_ms % 1000 == 0) std::snprintf(seconds, sizeof seconds, "%llds", static_cast<long long>(rest_ms / 1000));
  else {
    std::snprintf(seconds, sizeof seconds, "%.3f", static_cast<double>(rest_ms) / 1000.0);
    std::string s = seconds;
    while (s.back() == '0') s.pop_back();
    std::snprintf(seconds, sizeof seconds, "%ss", s.c_str());
  }
  return minutes > 0 ? std::to_string(minutes) + "m" + seconds : std::string(seconds);
}

void set_rate_headers(http::Response& res, const KeyGrant& grant) {
  if (!grant.limits) return;
  const ports::LimitDecision& d = *grant.limits;
  if (grant.rpm > 0) {
    res.set_header("x-ratelimit-limit-requests", std::to_string(grant.rpm));
    res.set_header("x-ratelimit-remaining-requests", std::to_string(std::max<std::int64_t>(d.remaining_requests, 0)));
    res.set_header("x-ratelimit-reset-requests", reset_duration(d.reset_requests));
  }
  if (grant.tpm > 0) {
    res.set_header("x-ratelimit-limit-tokens", std::to_string(grant.tpm));
    res.set_header("x-ratelimit-remaining-tokens", std::to_string(std::max<std::int64_t>(d.remaining_tokens, 0)));
    res.set_header("x-ratelimit-reset-tokens", reset_duration(d.reset_tokens));
  }
}

KeyAdmission::KeyAdmission(ApiKeys& keys, KeySpend& spend, std::shared_ptr<ports::RateLimiter> limiter, KeyMetrics& metrics,
                           LimitsOnError on_error)
    : keys_(keys), spend_(spend), limiter_(std::move(limiter)), metrics_(metrics), on_error_(on_error) {}

Caller KeyAdmission::caller(std::string_view authorization) const {
  if (!keys_.required()) return {KeyVerdict::ok, nullptr};  // an open gateway: nobody to charge
  return keys_.find(authorization, static_cast<std::int64_t>(std::time(nullptr)));
}

std::optional<ApiError> KeyAdmission::check_model(const ports::ApiKey& key, const std::string& model) {
  if (!key.models.empty() && std::find(key.models.begin(), key.models.end(), model) == key.models.end()) {
    metrics_.count_admission(key.name, "model");
    std::string allowed;
    for (const auto& m : key.models) allowed += (allowed.empty() ? "" : ", ") + m;
    return ApiError{403, "The API key '" + key.name + "' may not use the model '" + model + "' (allowed: " + allowed + ")",
                    "permission_error", "model", "model_not_allowed"};
  }
  return std::nullopt;
}

std::optional<ApiError> KeyAdmission::check_budget(const ports::ApiKey& key, http::Response& res) {
  if (key.budget_usd) {
    const double spent = spend_.spent(key.name);
    if (spent >= *key.budget_usd) {
      metrics_.count_admission(key.name, "budget");
      res.set_header("x-should-retry", "false");
      char text[160];
      std::snprintf(text, sizeof text, "has spent $%.6f of its budget of $%.6f", spent, *key.budget_usd);
      return ApiError{429, "The API key '" + key.name + "' " + text + "; raise the budget (overhead keys) to go on",
                      "insufficient_quota", "", "insufficient_quota"};
    }
  }
  return std::nullopt;
}

std::optional<ApiError> KeyAdmission::admit(const Caller& caller, const std::string& model, std::int64_t prompt_tokens,
                                            http::Response& res, KeyGrant& grant) {
  if (caller.verdict != KeyVerdict::ok) return caller_error(caller);
  if (!caller.key) return std::nullopt;
  const ports::ApiKey& key = *caller.key;
  grant.key_name = key.name;
  grant.rpm = key.rpm;
  grant.tpm = key.tpm;
  if (auto refusal = check_model(key, model)) return refusal;
  if (auto refusal = check_budget(key, res)) return refusal;
  if (key.rpm <= 0 && key.tpm <= 0) {
    metrics_.count_admission(key.name, "admitted");
    return std::nullopt;
  }
  ports::LimitDecision decision;
  try {
    decision = limiter_->admit({key.name, key.rpm, key.tpm, prompt_tokens});
  } catch (const std::exception& e) {
    limiter_failures_.fetch_add(1);
    if (on_error_ == LimitsOnError::open) {
      metrics_.count_admission(key.name, "admitted");
      return std::nullopt;
    }
    res.set_header("Retry-After", "1");
    return ApiError{503, "The rate limits cannot be checked (" + limiter_->where() + " does not answer) and --limits-on-error is closed",
                    "server_error", "", "limits_unavailable"};
  }
  grant.limits = decision;
  set_rate_headers(res, grant);
  if (decision.admitted) {
    metrics_.count_admission(key.name, "admitted");
    return std::nullopt;
  }
  metrics_.count_admission(key.name, decision.refused_by);
  const auto retry_s = std::max<std::int64_t>(1, (decision.retry_after.count() + 999) / 1000);
  res.set_header("Retry-After", std::to_string(retry_s));
  const bool by_requests = decision.refused_by == "requests";
  std::string message = "Rate limit reached for key '" + key.name + "' on " +
                        (by_requests ? "requests per min (RPM): Limit " + std::to_string(key.rpm)
                                     : "tokens per min (TPM): Limit " + std::to_string(key.tpm) + ", Requested " +
                                           std::to_string(prompt_tokens)) +
                        ". Please try again in " + reset_duration(decision.retry_after) + ".";
  if (!by_requests && prompt_tokens > key.tpm) message = "This request's " + std::to_string(prompt_tokens) +
      " prompt tokens exceed the key '" + key.name + "''s limit of " + std::to_string(key.tpm) + " tokens per minute";
  return ApiError{429, message, by_requests ? "requests" : "tokens", "", "rate_limit_exceeded"};
}

void KeyAdmission::answered(const std::string& key_name, std::int64_t tpm, std::int64_t prompt_tokens,
                            std::int64_t completion_tokens, double cost_usd) {
  if (key_name.empty()) return;
  metrics_.count_answer(key_name, prompt_tokens, completion_tokens, cost_usd);
  spend_.add(key_name, cost_usd);
  if (tpm > 0 && completion_tokens > 0) {
    try {
      limiter_->charge(key_name, completion_tokens);
    } catch (const std::exception&) {
      limiter_failures_.fetch_add(1);  // counted; the next admission meets the same outage
    }
  }
}

}  // namespace overhead::serve
