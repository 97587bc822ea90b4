#include "backends/sqlite_key_store.hpp"

#include <stdexcept>

#include "backends/key_store_rows.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {

using ports::ApiKey;
using ports::KeyExistsError;
using ports::KeyUsage;
using ports::UsageBucket;

namespace {

constexpr const char* kSqliteKeyColumns = "name, secret_hash, rpm, tpm, budget_usd, models, created_unix, expires_unix, revoked_unix";

// The records of key ?1 (of experiment ?2, or all when ?2 is empty), grouped by model ('m') and
// by UTC day ('d') in one statement, so both sets of buckets count the same records.
constexpr const char* kSqliteUsageSql =
    "SELECT 'm', COALESCE(model, ''), count(*), COALESCE(SUM(token_count), 0), COALESCE(SUM(output_tokens), 0),"
    " TOTAL(cost_usd) FROM records WHERE key_name = ?1 AND (?2 = '' OR experiment = ?2) GROUP BY 2"
    " UNION ALL "
    "SELECT 'd', substr(COALESCE(start_time, ''), 1, 10), count(*), COALESCE(SUM(token_count), 0),"
    " COALESCE(SUM(output_tokens), 0), TOTAL(cost_usd) FROM records"
    " WHERE key_name = ?1 AND (?2 = '' OR experiment = ?2) GROUP BY 2";

}  // namespace

SqliteKeyStore::SqliteKeyStore(std::string url, const std::string& path, std::chrono::milliseconds call_timeout)
    : url_(std::move(url)), db_(path, url_, call_timeout) {
  db_.exec(
      "CREATE TABLE IF NOT EXISTS keys (name TEXT PRIMARY KEY NOT NULL, secret_hash TEXT NOT NULL,"
      " rpm INTEGER NOT NULL, tpm INTEGER NOT NULL, budget_usd REAL, models TEXT NOT NULL,"
      " created_unix INTEGER NOT NULL, expires_unix INTEGER NOT NULL, revoked_unix INTEGER NOT NULL) WITHOUT ROWID;"
      "CREATE INDEX IF NOT EXISTS records_key_name ON records(key_name);");
  insert_ = db_.prepare(std::string("INSERT INTO keys(") + kSqliteKeyColumns +
                        ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT(name) DO NOTHING");
  list_ = db_.prepare(std::string("SELECT ") + kSqliteKeyColumns + " FROM keys ORDER BY name");
  revoke_ = db_.prepare("UPDATE keys SET revoked_unix = ?2 WHERE name = ?1 AND revoked_unix = 0");
}

void SqliteKeyStore::create(const ApiKey& key) {
  std::lock_guard lock(mutex_);
  insert_.bind(1, key.name).bind(2, key.secret_hash).bind(3, key.rpm).bind(4, key.tpm);
  if (key.budget_usd) insert_.bind_real(5, *key.budget_usd);
  else insert_.bind_null(5);
  insert_.bind(6, key_models_json(key.models)).bind(7, key.created_unix).bind(8, key.expires_unix).bind(9, key.revoked_unix);
  insert_.run();
  if (db_.changes() == 0) throw KeyExistsError(url_ + ": a key named \"" + key.name + "\" exists already");
}

std::vector<ApiKey> SqliteKeyStore::list() {
  std::lock_guard lock(mutex_);
  std::vector<ApiKey> keys;
  try {
    while (list_.step()) {
      ApiKey k;
      k.name = list_.column_text(0);
      k.secret_hash = list_.column_text(1);
      k.rpm = list_.column_int(2);
      k.tpm = list_.column_int(3);
      if (!list_.column_is_null(4)) k.budget_usd = list_.column_double(4);
      k.models = key_models_from_json(list_.column_text(5), url_ + ": key \"" + k.name + "\"");
      k.created_unix = list_.column_int(6);
      k.expires_unix = list_.column_int(7);
      k.revoked_unix = list_.column_int(8);
      keys.push_back(std::move(k));
    }
  } catch (...) {
    list_.reset();
    throw;
  }
  list_.reset();
  return keys;
}

bool SqliteKeyStore::revoke(const std::string& name, std::int64_t now_unix) {
  std::lock_guard lock(mutex_);
  revoke_.bind(1, name).bind(2, now_unix).run();
  return db_.changes() > 0;
}

KeyUsage SqliteKeyStore::usage(const std::string& name, const std::string& experiment) {
  std::lock_guard lock(mutex_);
  if (!usage_) usage_ = db_.prepare(kSqliteUsageSql);
  std::vector<UsageBucket> by_model, by_day;
  usage_.bind(1, name).bind(2, experiment);
  try {
    while (usage_.step()) {
      UsageBucket b{std::string(usage_.column_text(1)), usage_.column_int(2), usage_.column_int(3), usage_.column_int(4),
                    usage_.column_double(5)};
      (usage_.column_text(0) == "m" ? by_model : by_day).push_back(std::move(b));
    }
  } catch (...) {
    usage_.reset();
    throw;
  }
  usage_.reset();
  return key_usage_from_buckets(name, std::move(by_model), std::move(by_day));
}

std::unordered_map<std::string, double> SqliteKeyStore::spend_by_key() {
  std::lock_guard lock(mutex_);
  if (!spend_)
    spend_ = db_.prepare("SELECT key_name, TOTAL(cost_usd) FROM records WHERE key_name IS NOT NULL AND key_name <> ''"
                         " GROUP BY key_name");
  std::unordered_map<std::string, double> out;
  try {
    while (spend_.step()) out[std::string(spend_.column_text(0))] = spend_.column_double(1);
  } catch (...) {
    spend_.reset();
    throw;
  }
  spend_.reset();
  return out;
}

std::unique_ptr<ports::KeyStore> open_sqlite_key_store(const ports::BackendUrl& u) {
  u.check_params({"timeout_ms"});
  if (u.path.empty()) throw std::invalid_argument(u.describe("key store", "expected sqlite:PATH"));
  return std::make_unique<SqliteKeyStore>(u.redacted(), u.path, u.call_timeout());
}

}  // namespace overhead::backends
