// What the PostgreSQL stores beside the records table (postgres_key_store: <table>_keys,
// postgres_batch_store: <table>_batch_files and <table>_batches) share, so each says only its SQL:
//   - PostgresSession: one connection behind a mutex, opened again after a failure (the record
//     store's rule), through which every call runs;
//   - a side table's name from the URL's table= and schema=, refused when PostgreSQL would cut it
//     (identifiers longer than 63 bytes are truncated silently, and two cut names could meet);
//   - the statement that creates side tables under an advisory lock (CREATE ... IF NOT EXISTS
//     still races on the catalog between two openers), without the NOTICE an existing table sends;
//   - parameters and cells as text: an integer cell read whole or a permanent StoreError.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "backends/postgres_connection.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {

// PostgreSQL's longest identifier (NAMEDATALEN - 1).
inline constexpr std::size_t kPostgresMaxIdentifier = 63;

class PostgresSession {
 public:
  explicit PostgresSession(PostgresEndpoint endpoint) : endpoint_(std::move(endpoint)) {}
  // Runs `fn(connection)` alone on the connection, reconnecting first when the last call broke it.
  template <class Fn>
  decltype(auto) with(Fn&& fn) {
    std::lock_guard lock(mutex_);
    if (!conn_ || !conn_->healthy()) {
      conn_.reset();
      conn_ = std::make_unique<PostgresConnection>(endpoint_);
    }
    return fn(*conn_);
  }
  [[nodiscard]] const std::string& shown() const { return endpoint_.shown; }

 private:
  const PostgresEndpoint endpoint_;
  std::mutex mutex_;
  std::unique_ptr<PostgresConnection> conn_;
};

// `table` quoted and qualified by `schema` (none when empty: the search path's).
[[nodiscard]] std::string pg_qualified(const std::string& schema, const std::string& table);

// Throws std::invalid_argument (naming the URL and the parameter) when `records_table` +
// `longest_suffix` is longer than PostgreSQL keeps.
void check_pg_side_names(const ports::BackendUrl& url, const std::string& records_table, std::string_view longest_suffix);

// BEGIN; the advisory lock named `lock_name`; the schema when given; `statements`; COMMIT.
[[nodiscard]] std::string pg_create_under_lock(const std::string& lock_name, const std::string& schema,
                                               const std::string& statements);

[[nodiscard]] std::int64_t pg_int_cell(const char* text, const std::string& where);
[[nodiscard]] inline PgParam pg_text(std::string s) { return {std::move(s), false}; }
[[nodiscard]] inline PgParam pg_integer(std::int64_t v) { return {std::to_string(v), false}; }

}  // namespace overhead::backends
