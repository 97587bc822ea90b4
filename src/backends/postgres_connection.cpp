#include "backends/postgres_connection.hpp"

#include <libpq-fe.h>

#include <algorithm>
#include <memory>

namespace overhead::backends {

using ports::Failure;
using ports::StoreError;

namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// libpq's messages span lines and tabs ("connection to server ... failed: FATAL:  ..."); one line for the CLI.
std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\t', ' ');
  while (!s.empty() && s.back() == ' ') s.pop_back();
  std::string out;
  for (char c : s)
    if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
  return out;
}

// A refused connection at start-up has no SQLSTATE in libpq, only its text (the server's own
// FATAL message, in the C locale the server was started with). These say the request itself is
// wrong; anything else (refused, timed out, too many clients, starting up) may pass on a retry.
bool connect_refusal_is_permanent(const std::string& message) {
  static const char* const kPermanent[] = {
      "password authentication failed", "does not exist", "no pg_hba.conf entry", "no password supplied",
      "password is required", "permission denied", "invalid port number", "could not translate host name",
      "invalid connection option",
  };
  for (const char* p : kPermanent)
    if (message.find(p) != std::string::npos) return true;
  return false;
}

// SQLSTATE classes that a retry can get past: connection exceptions (08), transaction rollbacks
// such as deadlocks and serialization failures (40), insufficient resources (53), operator
// intervention: shutdown, statement timeout (57), lock not available (55P03).
bool sqlstate_is_transient(const char* state) {
  if (!state) return true;  // no server answer at all: the connection failed
  const std::string s(state);
  return s.starts_with("08") || s.starts_with("40") || s.starts_with("53") || s.starts_with("57") || s == "55P03";
}

}  // namespace

PostgresConnection::PostgresConnection(const PostgresEndpoint& e) : endpoint_(e) {
  const auto seconds = std::max<long long>(2, (e.call_timeout.count() + 999) / 1000);  // libpq's minimum is 2
  const std::string port = std::to_string(e.port);
  const std::string connect_timeout = std::to_string(seconds);
  const std::string tcp_user_timeout = std::to_string(e.call_timeout.count());
  // extra_float_digits=3: a DOUBLE PRECISION column reads back as the same double (shortest exact
  // text from PostgreSQL 12 on, 17 digits before), so a stored price is the price written.
  const std::string options = "-c statement_timeout=" + std::to_string(e.call_timeout.count()) +
                              " -c extra_float_digits=3" + (e.read_only ? " -c default_transaction_read_only=on" : "");
  const char* keys[] = {"host", "port", "user", "password", "dbname", "connect_timeout", "tcp_user_timeout",
                        "options", "application_name", "client_encoding", nullptr};
  const char* values[] = {e.host.c_str(), port.c_str(), e.user.c_str(), e.password.c_str(), e.database.c_str(),
                          connect_timeout.c_str(), tcp_user_timeout.c_str(), options.c_str(), "overhead", "UTF8",
                          nullptr};
  conn_ = PQconnectdbParams(keys, values, 0);
  if (!conn_) throw StoreError(endpoint_.shown + ": cannot allocate a PostgreSQL connection", Failure::transient);
  if (PQstatus(conn_) != CONNECTION_OK) {
    const std::string reason = one_line(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    throw StoreError(endpoint_.shown + ": cannot connect: " + reason,
                     connect_refusal_is_permanent(reason) ? Failure::permanent : Failure::transient);
  }
}

PostgresConnection::~PostgresConnection() {
  if (conn_) PQfinish(conn_);
}

bool PostgresConnection::healthy() const { return conn_ && !broken_ && PQstatus(conn_) == CONNECTION_OK; }

void PostgresConnection::fail(const std::string& what, PGresult* result) {
  const char* state = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string reason = result ? PQresultErrorMessage(result) : "";
  if (reason.empty()) reason = PQerrorMessage(conn_);
  const bool lost = PQstatus(conn_) != CONNECTION_OK;
  if (lost) broken_ = true;
  const bool transient = lost || sqlstate_is_transient(state);
  throw StoreError(endpoint_.shown + ": " + what + ": " + one_line(reason) + (state ? " (SQLSTATE " + std::string(state) + ")" : ""),
                   transient ? Failure::transient : Failure::permanent);
}

void PostgresConnection::send(const std::string& what, const std::string& sql, const std::vector<PgParam>& params,
                              bool single_row) {
  if (!healthy()) {
    broken_ = true;
    throw StoreError(endpoint_.shown + ": " + what + ": connection is closed", Failure::transient);
  }
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p.null ? nullptr : p.text.c_str());
  const int ok = params.empty() && !single_row
                     ? PQsendQuery(conn_, sql.c_str())
                     : PQsendQueryParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, values.data(),
                                         nullptr, nullptr, 0);
  if (!ok) fail(what, nullptr);
  if (single_row && !PQsetSingleRowMode(conn_)) fail(what, nullptr);
}

std::size_t PostgresConnection::exec(const std::string& what, const std::string& sql, const std::vector<PgParam>& params) {
  send(what, sql, params, false);
  // Read every result (a multi-statement string yields one per statement); the first error wins.
  Result error;
  std::size_t affected = 0;
  while (PGresult* raw = PQgetResult(conn_)) {
    Result r(raw);
    const auto status = PQresultStatus(raw);
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
      const char* n = PQcmdTuples(raw);
      if (n && *n) affected = static_cast<std::size_t>(std::stoull(n));
    } else if (!error) {
      error = std::move(r);
    }
  }
  if (error) fail(what, error.get());
  if (PQstatus(conn_) != CONNECTION_OK) fail(what, nullptr);
  return affected;
}

void PostgresConnection::query_rows(const std::string& what, const std::string& sql, const std::vector<PgParam>& params,
                                    const std::function<void(const std::vector<const char*>&)>& row) {
  send(what, sql, params, true);
  Result error;
  std::vector<const char*> cells;
  while (PGresult* raw = PQgetResult(conn_)) {
    Result r(raw);
    const auto status = PQresultStatus(raw);
    if (status == PGRES_SINGLE_TUPLE && !error) {
      const int n = PQnfields(raw);
      cells.assign(static_cast<std::size_t>(n), nullptr);
      for (int c = 0; c < n; ++c)
        if (!PQgetisnull(raw, 0, c)) cells[static_cast<std::size_t>(c)] = PQgetvalue(raw, 0, c);
      try {
        row(cells);
      } catch (...) {
        broken_ = true;  // the rest of the result is still on the wire
        throw;
      }
    } else if (status != PGRES_TUPLES_OK && status != PGRES_SINGLE_TUPLE && !error) {
      error = std::move(r);
    }
  }
  if (error) fail(what, error.get());
  if (PQstatus(conn_) != CONNECTION_OK) fail(what, nullptr);
}

}  // namespace overhead::backends
