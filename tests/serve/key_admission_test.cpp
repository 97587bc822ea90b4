// Admission by key (serve/key_admission.hpp) over a key store in memory: who is calling (missing,
// unknown, revoked, expired keys), the models a key may use, its budget from the store's spend
// plus this gateway's answers, its rate limits and their headers, a limiter that fails (open and
// closed), the per-key metrics' bound, and the reset headers' format.
#include <gtest/gtest.h>

#include <atomic>
#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "ports/key_secret.hpp"
#include "ports/key_store.hpp"
#include "serve/api_keys.hpp"
#include "serve/http/message.hpp"
#include "serve/key_admission.hpp"
#include "serve/key_metrics.hpp"
#include "serve/key_spend.hpp"
#include "serve/window_rate_limiter.hpp"

namespace overhead::serve {
namespace {

using std::chrono::milliseconds;

class MemoryKeyStore : public ports::KeyStore {
 public:
  void create(const ports::ApiKey& key) override {
    std::lock_guard lock(mutex_);
    if (!keys_.emplace(key.name, key).second) throw ports::KeyExistsError(key.name);
  }
  std::vector<ports::ApiKey> list() override {
    std::lock_guard lock(mutex_);
    if (down) throw ports::StoreError("memory: down", ports::Failure::transient);
    std::vector<ports::ApiKey> out;
    for (const auto& [n, k] : keys_) out.push_back(k);
    return out;
  }
  bool revoke(const std::string& name, std::int64_t now) override {
    std::lock_guard lock(mutex_);
    const auto it = keys_.find(name);
    if (it == keys_.end() || it->second.revoked_unix) return false;
    it->second.revoked_unix = now;
    return true;
  }
  ports::KeyUsage usage(const std::string& name, const std::string&) override {
    ports::KeyUsage u;
    u.key = name;
    return u;
  }
  std::unordered_map<std::string, double> spend_by_key() override {
    std::lock_guard lock(mutex_);
    if (down) throw ports::StoreError("memory: down", ports::Failure::transient);
    return spend;
  }
  const std::string& url() const override { return url_; }

  std::atomic<bool> down{false};
  std::unordered_map<std::string, double> spend;

 private:
  std::mutex mutex_;
  std::map<std::string, ports::ApiKey> keys_;
  std::string url_ = "memory:";
};

class ThrowingLimiter : public ports::RateLimiter {
 public:
  ports::LimitDecision admit(const ports::LimitAsk&) override { throw std::runtime_error("redis://***@host: unreachable"); }
  void charge(const std::string&, std::int64_t) override { throw std::runtime_error("unreachable"); }
  milliseconds window() const override { return milliseconds(60000); }
  std::string where() const override { return "redis://***@host"; }
};

struct Fixture {
  std::shared_ptr<MemoryKeyStore> store = std::make_shared<MemoryKeyStore>();
  std::map<std::string, std::string> secrets;

  std::string add(ports::ApiKey key) {
    const std::string secret = ports::new_key_secret();
    key.secret_hash = ports::key_secret_hash(secret);
    store->create(key);
    secrets[key.name] = secret;
    return "Bearer " + secret;
  }
};

ports::ApiKey named(const std::string& name) {
  ports::ApiKey k;
  k.name = name;
  return k;
}

TEST(ApiKeys, FindsAKeyByItsSecretAndSaysWhyNot) {
  Fixture f;
  const std::string ok = f.add(named("team-a"));
  ports::ApiKey expired = named("old");
  expired.expires_unix = 1000;
  const std::string old = f.add(expired);
  const std::string revoked = f.add(named("gone"));
  f.store->revoke("gone", 5);
  ApiKeys keys(f.store, "", milliseconds(60000));
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  EXPECT_EQ(keys.find(ok, now).verdict, KeyVerdict::ok);
  EXPECT_EQ(keys.find(ok, now).key->name, "team-a");
  EXPECT_EQ(keys.find("bearer " + f.secrets["team-a"], now).verdict, KeyVerdict::ok) << "the scheme in any case";
  EXPECT_EQ(keys.find(old, now).verdict, KeyVerdict::expired);
  EXPECT_EQ(keys.find(old, 999).verdict, KeyVerdict::ok);
  EXPECT_EQ(keys.find(revoked, now).verdict, KeyVerdict::revoked);
  EXPECT_EQ(keys.find("Bearer sk-ovh-nothing", now).verdict, KeyVerdict::unknown);
  EXPECT_EQ(keys.find("", now).verdict, KeyVerdict::missing);
  EXPECT_EQ(keys.find("Basic abc", now).verdict, KeyVerdict::missing);
  const ApiError e = caller_error(keys.find(revoked, now));
  EXPECT_EQ(e.status, 401);
  EXPECT_EQ(e.code, "invalid_api_key");
  EXPECT_NE(e.message.find("gone"), std::string::npos);
}

TEST(ApiKeys, AKeyRevokedElsewhereIsRefusedAfterTheNextRefresh) {
  Fixture f;
  const std::string auth = f.add(named("team-a"));
  ApiKeys keys(f.store, "", milliseconds(50));
  const auto now = static_cast<std::int64_t>(std::time(nullptr));
  ASSERT_EQ(keys.find(auth, now).verdict, KeyVerdict::ok);
  f.store->revoke("team-a", now);
  for (int i = 0; i < 100 && keys.find(auth, now).verdict == KeyVerdict::ok; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(keys.find(auth, now).verdict, KeyVerdict::revoked);
  // A later key is known after a refresh too.
  const std::string later = f.add(named("team-b"));
  ASSERT_TRUE(keys.refresh_now());
  EXPECT_EQ(keys.find(later, now).verdict, KeyVerdict::ok);
}

TEST(ApiKeys, AStoreOutageKeepsTheKeysLastRead) {
  Fixture f;
  const std::string auth = f.add(named("team-a"));
  ApiKeys keys(f.store, "", milliseconds(60000));
  f.store->down = true;
  EXPECT_FALSE(keys.refresh_now());
  EXPECT_EQ(keys.refresh_failures(), 1u);
  EXPECT_EQ(keys.find(auth, std::time(nullptr)).verdict, KeyVerdict::ok);
}

TEST(ApiKeys, TheSingleTokenIsTheDefaultKey) {
  ApiKeys keys(nullptr, "s3cret-token", milliseconds(1000));
  EXPECT_TRUE(keys.required());
  const Caller c = keys.find("Bearer s3cret-token", 0);
  ASSERT_EQ(c.verdict, KeyVerdict::ok);
  EXPECT_EQ(c.key->name, kDefaultKeyName);
  EXPECT_EQ(keys.find("Bearer s3cret-tokeN", 0).verdict, KeyVerdict::unknown);
  EXPECT_FALSE(ApiKeys(nullptr, "", milliseconds(1000)).required());
}

struct Gate {
  Fixture f;
  std::unique_ptr<ApiKeys> keys;
  std::unique_ptr<KeySpend> spend;
  KeyMetrics metrics{3};
  std::unique_ptr<KeyAdmission> admission;

  explicit Gate(std::shared_ptr<ports::RateLimiter> limiter = std::make_shared<WindowRateLimiter>(milliseconds(600000)),
                LimitsOnError on_error = LimitsOnError::open) {
    keys = std::make_unique<ApiKeys>(f.store, "", milliseconds(60000));
    spend = std::make_unique<KeySpend>(f.store, milliseconds(60000), [] { return true; });
    admission = std::make_unique<KeyAdmission>(*keys, *spend, std::move(limiter), metrics, on_error);
  }
  std::optional<ApiError> admit(const std::string& auth, const std::string& model, std::int64_t tokens, http::Response& res,
                                KeyGrant& grant) {
    (void)keys->refresh_now();
    return admission->admit(admission->caller(auth), model, tokens, res, grant);
  }
};

TEST(KeyAdmission, AKeyMayUseOnlyItsModels) {
  Gate g;
  ports::ApiKey k = named("narrow");
  k.models = {"llama-3.3-70b-instruct"};
  const std::string auth = g.f.add(k);
  http::Response res;
  KeyGrant grant;
  EXPECT_FALSE(g.admit(auth, "llama-3.3-70b-instruct", 0, res, grant));
  const auto e = g.admit(auth, "gemma-2-9b-it", 0, res, grant);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 403);
  EXPECT_EQ(e->code, "model_not_allowed");
}

TEST(KeyAdmission, ABudgetStopsItsKeyFromTheStoresSpendAndThisGatewaysAnswers) {
  Gate g;
  ports::ApiKey k = named("capped");
  k.budget_usd = 1.0;
  const std::string auth = g.f.add(k);
  g.f.store->spend["capped"] = 0.75;
  ASSERT_TRUE(g.spend->refresh_now());
  http::Response res;
  KeyGrant grant;
  EXPECT_FALSE(g.admit(auth, "m", 0, res, grant));
  g.admission->answered("capped", 0, 10, 5, 0.20);  // in this gateway's overlay: 0.95
  EXPECT_FALSE(g.admit(auth, "m", 0, res, grant));
  g.admission->answered("capped", 0, 10, 5, 0.05);  // 1.00
  http::Response refused;
  const auto e = g.admit(auth, "m", 0, refused, grant);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 429);
  EXPECT_EQ(e->code, "insufficient_quota");
  EXPECT_EQ(refused.get_header_value("x-should-retry"), "false");
  // The store's later read holds those answers: the overlay no longer adds them once they are
  // older than the store's lag; here the read came too soon, so they still count (never late).
  g.f.store->spend["capped"] = 1.0;
  ASSERT_TRUE(g.spend->refresh_now());
  EXPECT_GE(g.spend->spent("capped"), 1.0);
  EXPECT_EQ(g.metrics.snapshot().at("capped").refused_budget, 1u);
}

TEST(KeyAdmission, RateLimitsRefuseWithHeadersNamingTheLimit) {
  Gate g;
  ports::ApiKey k = named("limited");
  k.rpm = 1;  // 10 per 10-minute window
  k.tpm = 100;  // 1000 per window
  const std::string auth = g.f.add(k);
  for (int i = 0; i < 10; ++i) {
    http::Response res;
    KeyGrant grant;
    ASSERT_FALSE(g.admit(auth, "m", 10, res, grant)) << i;
    EXPECT_EQ(res.get_header_value("x-ratelimit-limit-requests"), "1");
    EXPECT_EQ(res.get_header_value("x-ratelimit-remaining-requests"), std::to_string(9 - i));
    EXPECT_EQ(res.get_header_value("x-ratelimit-limit-tokens"), "100");
    EXPECT_EQ(res.get_header_value("x-ratelimit-remaining-tokens"), std::to_string(1000 - 10 * (i + 1)));
    EXPECT_FALSE(res.get_header_value("x-ratelimit-reset-requests").empty());
  }
  http::Response res;
  KeyGrant grant;
  const auto e = g.admit(auth, "m", 10, res, grant);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 429);
  EXPECT_EQ(e->type, "requests");
  EXPECT_EQ(e->code, "rate_limit_exceeded");
  EXPECT_NE(e->message.find("requests per min (RPM): Limit 1"), std::string::npos) << e->message;
  EXPECT_GE(std::stoi(res.get_header_value("Retry-After")), 1);
  EXPECT_EQ(g.metrics.snapshot().at("limited").refused_requests, 1u);
}

TEST(KeyAdmission, AnUnreachableLimiterAdmitsWhenOpenAndRefusesWhenClosed) {
  for (const auto policy : {LimitsOnError::open, LimitsOnError::closed}) {
    Gate g(std::make_shared<ThrowingLimiter>(), policy);
    ports::ApiKey k = named("limited");
    k.rpm = 10;
    const std::string auth = g.f.add(k);
    http::Response res;
    KeyGrant grant;
    const auto e = g.admit(auth, "m", 0, res, grant);
    EXPECT_EQ(g.admission->limiter_failures(), 1u);
    if (policy == LimitsOnError::open) {
      EXPECT_FALSE(e);
    } else {
      ASSERT_TRUE(e);
      EXPECT_EQ(e->status, 503);
      EXPECT_EQ(e->code, "limits_unavailable");
    }
  }
}

TEST(KeyMetrics, CardinalityIsBounded) {
  KeyMetrics m(3);
  for (int i = 0; i < 10; ++i) m.count_admission("key-" + std::to_string(i), "admitted");
  const auto snap = m.snapshot();
  EXPECT_EQ(snap.size(), 4u);  // three keys and _other
  EXPECT_EQ(snap.at(std::string(KeyMetrics::kOtherKeys)).admitted, 7u);
  m.count_answer("key-0", 10, 5, 0.5);
  const std::string text = m.exposition();
  EXPECT_NE(text.find("overhead_key_requests_total{key=\"key-0\",outcome=\"admitted\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("overhead_key_tokens_total{key=\"key-0\",kind=\"completion\"} 5"), std::string::npos) << text;
  EXPECT_NE(text.find("overhead_key_cost_usd_total{key=\"key-0\"} 0.5"), std::string::npos) << text;
}

TEST(ResetDuration, WritesGoDurationsAsOpenAIDoes) {
  EXPECT_EQ(reset_duration(milliseconds(20)), "20ms");
  EXPECT_EQ(reset_duration(milliseconds(1000)), "1s");
  EXPECT_EQ(reset_duration(milliseconds(1500)), "1.5s");
  EXPECT_EQ(reset_duration(milliseconds(360000)), "6m0s");
  EXPECT_EQ(reset_duration(milliseconds(61250)), "1m1.25s");
  EXPECT_EQ(reset_duration(milliseconds(-5)), "0ms");
}

}  // namespace
}  // namespace overhead::serve
