// The embedded key store (`sqlite:PATH`, the same file as the record store of that URL): a table
// `keys` beside `records`, one row per key name:
//   keys(name TEXT PRIMARY KEY, secret_hash TEXT, rpm INTEGER, tpm INTEGER, budget_usd REAL (NULL:
//        none), models TEXT (a JSON array), created_unix, expires_unix, revoked_unix INTEGER)
// create() is one INSERT ... ON CONFLICT(name) DO NOTHING: of two creators of one name (two
// processes on the file), SQLite's write lock lets one insert and the other find the row.
// usage() and spend_by_key() are one GROUP BY statement each over `records` (by model, and by
// the first ten characters of start_time: its UTC day), through an index on key_name that
// opening adds; the records table must exist (backends::open_key_store opens the record store
// of the URL first, which makes it). `timeout_ms` is SQLite's busy timeout, as the record store's.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "backends/sqlite_db.hpp"
#include "ports/backend_url.hpp"
#include "ports/key_store.hpp"

namespace overhead::backends {

class SqliteKeyStore final : public ports::KeyStore {
 public:
  SqliteKeyStore(std::string url, const std::string& path, std::chrono::milliseconds call_timeout = ports::kDefaultCallTimeout);

  void create(const ports::ApiKey& key) override;
  std::vector<ports::ApiKey> list() override;
  bool revoke(const std::string& name, std::int64_t now_unix) override;
  ports::KeyUsage usage(const std::string& name, const std::string& experiment) override;
  std::unordered_map<std::string, double> spend_by_key() override;
  const std::string& url() const override { return url_; }

 private:
  const std::string url_;
  std::mutex mutex_;
  SqliteDb db_;
  SqliteStatement insert_, list_, revoke_;
  // Prepared at first use: they read columns of `records` a table made by an older version
  // gets only when its record store is opened (open_key_store does that first).
  SqliteStatement usage_, spend_;
};

// The `sqlite:` arm of open_key_store (the record store of the URL already opened).
std::unique_ptr<ports::KeyStore> open_sqlite_key_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
