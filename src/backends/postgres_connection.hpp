// One libpq connection to a PostgreSQL server: connect with a deadline (connect_timeout,
// statement_timeout, tcp_user_timeout from the store's per-call timeout), run one statement with
// text parameters, and stream a result row by row. Failures become StoreError, split by what a
// retry can do (ports/errors.hpp): a lost or refused connection, a timeout, a deadlock or a server
// shutting down are transient; bad credentials, a missing database, a bad statement are
// permanent. Messages name the server by its redacted URL and never hold the password.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ports/errors.hpp"

struct pg_conn;
struct pg_result;

namespace overhead::backends {

struct PostgresEndpoint {
  std::string host;
  int port = 5432;
  std::string user;
  std::string password;  // never shown
  std::string database;
  std::string shown;     // redacted URL for messages
  std::chrono::milliseconds call_timeout{10000};
  // A reader's connection: every transaction on it is READ ONLY (default_transaction_read_only),
  // so the server itself refuses a write, whatever statement the client sends.
  bool read_only = false;
};

// A statement parameter in text form; nullopt-like `null` = SQL NULL.
struct PgParam {
  std::string text;
  bool null = false;
};

class PostgresConnection {
 public:
  // Connects; throws StoreError (transient when the server cannot be reached, permanent when it
  // refuses the user, the password or the database).
  explicit PostgresConnection(const PostgresEndpoint& endpoint);
  ~PostgresConnection();
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  // Runs one statement (one round trip) and returns the number of rows it affected. `sql` may
  // hold several statements only when `params` is empty. Throws StoreError; `what` names the call.
  std::size_t exec(const std::string& what, const std::string& sql, const std::vector<PgParam>& params = {});
  // Runs a query and calls `row` for each result row with its column values (nullptr = NULL),
  // one row in memory at a time. If `row` throws, the connection is dropped (the rest of the
  // result is not read) and the exception passes on.
  void query_rows(const std::string& what, const std::string& sql, const std::vector<PgParam>& params,
                  const std::function<void(const std::vector<const char*>&)>& row);
  // False after a connection failure: the caller opens a new connection.
  [[nodiscard]] bool healthy() const;

 private:
  [[noreturn]] void fail(const std::string& what, pg_result* result);
  void send(const std::string& what, const std::string& sql, const std::vector<PgParam>& params, bool single_row);

  PostgresEndpoint endpoint_;
  pg_conn* conn_ = nullptr;
  bool broken_ = false;
};

}  // namespace overhead::backends
