// The gateway's API keys (a port): each key's name, the hash of its secret, its limits, budget,
// allowed models and expiry; and the usage of a key summed from the records it was charged on.
// It lives in the record store's database (the same URL as `serve --store`), so a key's spend
// is read from the same rows that hold its requests: the adapters are in src/backends/
// (sqlite_key_store.*, postgres_key_store.*, dynamodb_key_store.*), opened by
// backends::open_key_store(url).
//
// Contract every backend keeps (tests/pipe/contract/key_store_contract.hpp checks it):
//   - The secret never reaches the store: only `secret_hash` (hex SHA-256 of the secret, see
//     ports/key_secret.hpp for why a fast hash suffices for 256-bit random secrets).
//   - Names are unique: create() of a name that exists throws KeyExistsError, also under a race
//     between two gateways (a conditional insert, not a read then a write).
//   - revoke() sets revoked_at once; the key stays listed (its usage still reads) but is refused.
//   - list() returns every key, revoked ones too, sorted by name.
//   - usage() sums the records whose key_name is the key: requests, tokens, cost, by model and by
//     UTC day (of start_time). spend_by_key() is the cost per key over all records, for budgets.
//   - Thread-safety and deadlines as the record store's (store.hpp); failures throw StoreError.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ports/errors.hpp"

namespace overhead::ports {

struct ApiKey {
  std::string name;         // unique, shown in usage, records, metrics: never the secret
  std::string secret_hash;  // lowercase hex SHA-256 of the secret
  std::int64_t rpm = 0;     // requests per minute; 0: no limit
  std::int64_t tpm = 0;     // tokens (prompt + completion) per minute; 0: no limit
  std::optional<double> budget_usd;  // none: no budget
  std::vector<std::string> models;   // empty: every model
  std::int64_t created_unix = 0;
  std::int64_t expires_unix = 0;  // 0: never
  std::int64_t revoked_unix = 0;  // 0: not revoked
};

// A key's usage summed from its records.
struct UsageBucket {
  std::string label;  // the model, or the UTC day "YYYY-MM-DD"
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  double cost_usd = 0;
};
struct KeyUsage {
  std::string key;
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;      // token_count of its records
  std::int64_t completion_tokens = 0;  // output_tokens
  double cost_usd = 0;
  std::vector<UsageBucket> by_model;  // sorted by label
  std::vector<UsageBucket> by_day;    // sorted by label (oldest first)
};

class KeyExistsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class KeyStore {
 public:
  virtual ~KeyStore() = default;
  // Stores a new key. Throws KeyExistsError when its name is taken.
  virtual void create(const ApiKey& key) = 0;
  // Every key, revoked ones too, sorted by name.
  [[nodiscard]] virtual std::vector<ApiKey> list() = 0;
  // Marks the key revoked at `now_unix`; false when no key has that name (or it was revoked).
  virtual bool revoke(const std::string& name, std::int64_t now_unix) = 0;
  // The usage of key `name` over the records of `experiment` (all experiments when empty).
  [[nodiscard]] virtual KeyUsage usage(const std::string& name, const std::string& experiment) = 0;
  // Cost in USD per key name over every record that names a key.
  [[nodiscard]] virtual std::unordered_map<std::string, double> spend_by_key() = 0;
  [[nodiscard]] virtual const std::string& url() const = 0;
};

}  // namespace overhead::ports
