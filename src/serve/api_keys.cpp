#include "serve/api_keys.hpp"

#include <algorithm>
#include <cctype>

#include "ports/key_secret.hpp"
#include "serve/api_error.hpp"

namespace overhead::serve {

namespace {

// The token of "Bearer <token>" (scheme in any case, RFC 7235), or empty.
std::string_view bearer_token(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return {};
  for (std::size_t i = 0; i < kScheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return {};
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) token.remove_prefix(1);
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t')) token.remove_suffix(1);
  return token;
}

}  // namespace

ApiKeys::ApiKeys(std::shared_ptr<ports::KeyStore> store, std::string single_token, std::chrono::milliseconds refresh)
    : store_(std::move(store)), refresh_(refresh.count() > 0 ? refresh : std::chrono::milliseconds(2000)) {
  if (!single_token.empty()) {
    auto k = std::make_shared<ports::ApiKey>();
    k->name = kDefaultKeyName;
    single_hash_ = ports::key_secret_hash(single_token);
    k->secret_hash = single_hash_;
    single_ = std::move(k);
  }
  if (!store_) return;
  auto first = std::make_shared<ByHash>();
  for (auto& k : store_->list()) {  // throws: the gateway does not start without its keys
    auto key = std::make_shared<const ports::ApiKey>(std::move(k));
    (*first)[key->secret_hash] = key;
  }
  by_hash_ = std::move(first);
  thread_ = std::thread([this] { refresh_loop(); });
}

ApiKeys::~ApiKeys() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool ApiKeys::refresh_now() {
  if (!store_) return true;
  try {
    auto next = std::make_shared<ByHash>();
    for (auto& k : store_->list()) {
      auto key = std::make_shared<const ports::ApiKey>(std::move(k));
      (*next)[key->secret_hash] = key;
    }
    std::lock_guard lock(mutex_);
    by_hash_ = std::move(next);
    return true;
  } catch (const std::exception&) {
    failures_.fetch_add(1);  // the last keys read stay in force
    return false;
  }
}

void ApiKeys::refresh_loop() {
  std::unique_lock lock(mutex_);
  while (!stop_cv_.wait_for(lock, refresh_, [&] { return stopping_; })) {
    lock.unlock();
    (void)refresh_now();
    lock.lock();
  }
}

Caller ApiKeys::find(std::string_view authorization, std::int64_t now_unix) const {
  Caller c;
  const std::string_view token = bearer_token(authorization);
  if (token.empty()) return c;  // missing
  const std::string hash = ports::key_secret_hash(token);
  if (single_ && hash == single_hash_) return {KeyVerdict::ok, single_};
  std::shared_ptr<const ByHash> keys;
  {
    std::lock_guard lock(mutex_);
    keys = by_hash_;
  }
  const auto it = keys->find(hash);
  if (it == keys->end()) return {KeyVerdict::unknown, nullptr};
  const auto& key = it->second;
  if (key->revoked_unix > 0) return {KeyVerdict::revoked, key};
  if (key->expires_unix > 0 && now_unix >= key->expires_unix) return {KeyVerdict::expired, key};
  return {KeyVerdict::ok, key};
}

std::vector<std::shared_ptr<const ports::ApiKey>> ApiKeys::keys() const {
  std::shared_ptr<const ByHash> keys;
  {
    std::lock_guard lock(mutex_);
    keys = by_hash_;
  }
  std::vector<std::shared_ptr<const ports::ApiKey>> out;
  for (const auto& [hash, key] : *keys) out.push_back(key);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a->name < b->name; });
  return out;
}

bool ApiKeys::any_budget() const {
  std::lock_guard lock(mutex_);
  return std::any_of(by_hash_->begin(), by_hash_->end(), [](const auto& kv) { return kv.second->budget_usd.has_value(); });
}

ApiError caller_error(const Caller& caller) {
  std::string message;
  switch (caller.verdict) {
    case KeyVerdict::missing: message = "Missing bearer token in the Authorization header (Authorization: Bearer <key>)"; break;
    case KeyVerdict::unknown: message = "Incorrect API key provided: no key of this gateway has this secret"; break;
    case KeyVerdict::revoked: message = "The API key '" + caller.key->name + "' was revoked"; break;
    case KeyVerdict::expired: message = "The API key '" + caller.key->name + "' has expired"; break;
    case KeyVerdict::ok: break;
  }
  return {401, message, "invalid_request_error", "", "invalid_api_key"};
}

}  // namespace overhead::serve
