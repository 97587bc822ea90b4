// The PostgreSQL key store, in the database, schema and table family of the record store of the
// same URL (`postgres://USER[:PASS]@HOST:PORT/DB[?table=records&schema=S&timeout_ms=]`): a table
// `<table>_keys` (records_keys by default) beside the records table, one row per key name:
//   (name TEXT PRIMARY KEY, secret_hash TEXT, rpm BIGINT, tpm BIGINT, budget_usd DOUBLE PRECISION
//    (NULL: none), models TEXT (a JSON array), created_unix, expires_unix, revoked_unix BIGINT)
// created if missing under the same kind of advisory lock as the records table, with an index
// on the records' key_name.
//   create        INSERT ... ON CONFLICT (name) DO NOTHING: one statement, so of two gateways
//                 creating one name exactly one inserts; the other sees 0 rows and throws
//                 KeyExistsError.
//   revoke        UPDATE ... WHERE revoked_unix = 0: a second revoke changes nothing.
//   list          sorted by name in byte order (COLLATE "C"), as the other stores sort.
//   usage         one statement: GROUP BY model UNION ALL GROUP BY the UTC day of start_time,
//                 over the key's records (the index), so both sets of buckets count the same rows.
//   spend_by_key  one GROUP BY key_name over the records that name a key (a scan of the table).
// One connection behind a mutex, reconnected after a failure (postgres_side_table.hpp); errors are
// StoreError, transient or permanent, as the record store's (backends/postgres_connection.hpp).
#pragma once

#include <memory>

#include "backends/postgres_side_table.hpp"
#include "ports/backend_url.hpp"
#include "ports/key_store.hpp"

namespace overhead::backends {

class PostgresKeyStore final : public ports::KeyStore {
 public:
  // Connects and creates the keys table and the index if missing; throws StoreError. The
  // records table must exist (open_key_store opens the record store of the URL first).
  PostgresKeyStore(PostgresEndpoint endpoint, const std::string& schema, const std::string& records_table);

  void create(const ports::ApiKey& key) override;
  std::vector<ports::ApiKey> list() override;
  bool revoke(const std::string& name, std::int64_t now_unix) override;
  ports::KeyUsage usage(const std::string& name, const std::string& experiment) override;
  std::unordered_map<std::string, double> spend_by_key() override;
  const std::string& url() const override { return session_.shown(); }

 private:
  PostgresSession session_;
  const std::string keys_;     // quoted, schema-qualified: <table>_keys
  const std::string records_;  // quoted, schema-qualified: <table>
};

// The `postgres` (and `postgresql`) arm of open_key_store (the record store of the URL already opened).
std::unique_ptr<ports::KeyStore> open_postgres_key_store(const ports::BackendUrl& url);

}  // namespace overhead::backends
