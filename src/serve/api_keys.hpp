// Who is calling: the gateway's API keys, read from the key store (ports/key_store.hpp, the keys
// `overhead keys create` made) and kept in memory by the hash of their secret, plus the single
// token of --auth-token-file (a key named "default" with no limits). A bearer token is hashed
// (SHA-256, ports/key_secret.hpp) and looked up: no secret is held here, only hashes.
//
// Revocation and expiry: the keys are read again every `refresh` (2 s by default) on a thread of
// their own, so a key revoked or created through any gateway's store is refused or accepted by
// every gateway sharing the store within one refresh (plus the store's read time); an expiry is
// checked at each request against the wall clock. A refresh that fails keeps the last keys read
// (counted in refresh_failures(); a store outage must not lock every caller out), but the first
// read must succeed: the gateway does not start without its keys.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ports/key_store.hpp"

namespace overhead::serve {

// The name the --auth-token-file token is known by in records, usage and metrics.
inline constexpr std::string_view kDefaultKeyName = "default";

enum class KeyVerdict { ok, missing, unknown, revoked, expired };

struct Caller {
  KeyVerdict verdict = KeyVerdict::missing;
  std::shared_ptr<const ports::ApiKey> key;  // set when ok (and for revoked/expired: which one)
};

class ApiKeys {
 public:
  // `store` may be null (only the single token); `single_token` empty: none. With neither, every
  // request is let in as an anonymous caller (no key: no limits, no budget). Reads the store once
  // now (throws ports::StoreError when it cannot) and then every `refresh`.
  ApiKeys(std::shared_ptr<ports::KeyStore> store, std::string single_token, std::chrono::milliseconds refresh);
  ~ApiKeys();
  ApiKeys(const ApiKeys&) = delete;
  ApiKeys& operator=(const ApiKeys&) = delete;

  // Whether requests must carry a key.
  [[nodiscard]] bool required() const { return store_ != nullptr || single_ != nullptr; }
  // The caller of an Authorization header value ("Bearer <token>", the scheme in any case).
  [[nodiscard]] Caller find(std::string_view authorization, std::int64_t now_unix) const;
  // Reads the store now (tests; the refresh thread calls it). False when the read failed.
  bool refresh_now();
  [[nodiscard]] std::uint64_t refresh_failures() const { return failures_.load(); }
  // The keys as last read, sorted by name (the dashboard's table); empty without a store.
  [[nodiscard]] std::vector<std::shared_ptr<const ports::ApiKey>> keys() const;
  [[nodiscard]] bool any_budget() const;
  [[nodiscard]] ports::KeyStore* store() const { return store_.get(); }

 private:
  using ByHash = std::unordered_map<std::string, std::shared_ptr<const ports::ApiKey>>;
  void refresh_loop();

  std::shared_ptr<ports::KeyStore> store_;
  std::shared_ptr<const ports::ApiKey> single_;
  std::string single_hash_;
  std::chrono::milliseconds refresh_;
  mutable std::mutex mutex_;
  std::shared_ptr<const ByHash> by_hash_ = std::make_shared<ByHash>();
  std::atomic<std::uint64_t> failures_{0};
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// The HTTP refusal of a caller that is not ok: 401 with OpenAI's invalid_api_key, saying why
// (never echoing the token).
struct ApiError;
[[nodiscard]] ApiError caller_error(const Caller& caller);

}  // namespace overhead::serve
