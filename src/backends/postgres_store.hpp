// The PostgreSQL record store (`postgres://USER[:PASS]@HOST:PORT/DB[?table=records&schema=S&timeout_ms=]`),
// shared by consumers on many machines. One table, created if missing (never by a reader), keyed by
// (experiment_tokenizer, id), with one column per row of the record field table
// (ports/record_fields.hpp) and an index on experiment for scans.
//   - upsert_batch is one statement, so one round trip: a multi-row INSERT ... ON CONFLICT DO
//     UPDATE that keeps store.hpp's replay rule (a stored non-zero publish_acked/input_deleted
//     survives a replay carrying 0). Repeated keys in one batch are merged first, as if upserted
//     in order (PostgreSQL refuses to update one row twice in a statement). All or nothing.
//   - update_stamps is one UPDATE ... FROM (VALUES ...).
//   - scan streams rows (libpq single-row mode), so memory does not grow with the table.
// One connection behind a mutex; after a connection failure the next call reconnects. Errors are
// StoreError, transient or permanent (backends/postgres_connection.hpp), and name the redacted URL.
#pragma once

#include <memory>
#include <mutex>

#include "backends/postgres_connection.hpp"
#include "ports/backend_url.hpp"
#include "ports/store.hpp"

namespace overhead::backends {

class PostgresStore final : public ports::Store {
 public:
  // Connects and creates the schema (when given) and the table if missing; throws StoreError.
  PostgresStore(PostgresEndpoint endpoint, std::string schema, std::string table);
  // A reader (backends::Access::read_only, `analyze`): nothing is created or altered, and the
  // connection is READ ONLY. A missing table is a StoreError naming it; columns an older version
  // lacked read as empty (NULL). upsert and update_stamps throw.
  struct ReadOnly {};
  PostgresStore(ReadOnly, PostgresEndpoint endpoint, std::string schema, std::string table);

  void upsert(const ports::Record& record) override;
  std::vector<ports::UpsertFailure> upsert_batch(std::span<const ports::Record> records) override;
  std::size_t update_stamps(std::span<const ports::StampPatch> patches) override;
  void scan(const std::string& experiment, const std::function<void(const ports::Record&)>& fn) override;
  const std::string& url() const override { return endpoint_.shown; }

 private:
  PostgresConnection& connection_locked();
  void upsert_rows_locked(std::span<const ports::Record* const> rows);

  const PostgresEndpoint endpoint_;
  const std::string schema_;   // empty = the search path's (public)
  const std::string table_;    // quoted, schema-qualified: what the SQL names
  const bool read_only_ = false;
  std::string select_list_;    // the record's columns as scan selects them (NULL for an absent one)
  std::mutex mutex_;
  std::unique_ptr<PostgresConnection> conn_;
};

// A postgres:// URL's server, schema and table (parameters table=, schema=, timeout_ms=), as the
// record store reads them; the key store of the same URL reads them the same way.
struct PostgresTarget {
  PostgresEndpoint endpoint;
  std::string schema, table;
};
// Throws std::invalid_argument for a malformed URL or an unknown parameter.
PostgresTarget postgres_target(const ports::BackendUrl& url);
// `name` as a quoted identifier ("name", inner quotes doubled): a table or schema name from a
// URL taken literally.
std::string postgres_quote_ident(const std::string& name);

// The `postgres` (and `postgresql`) arm of open_store.
std::unique_ptr<ports::Store> open_postgres_store(const ports::BackendUrl& url);
// Its read-only form (a reader's: `analyze`).
std::unique_ptr<ports::Store> open_postgres_store_read_only(const ports::BackendUrl& url);

}  // namespace overhead::backends
