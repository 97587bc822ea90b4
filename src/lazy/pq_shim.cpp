// Stand-ins for libpq's API, linked in place of libpq (see src/lazy/CMakeLists.txt): each one
// calls the real function, looked up in libpq.so.5 on its first call, so only a command that
// opens a postgres:// store loads libpq and what it pulls in (Kerberos, LDAP, OpenSSL). A libpq
// function missing here is a link error ("undefined reference to PQ..."): add its stand-in below.
#include <libpq-fe.h>

#include "lazy/lazy_library.hpp"

namespace {
constexpr const char* kSoname = "libpq.so.5";
constexpr const char* kPackage = "libpq5 (libpq)";
}  // namespace

// The real function of this name, resolved once.
#define OVERHEAD_REAL(name) \
  static const auto real = overhead::lazy::function<decltype(&::name)>(kSoname, kPackage, #name)

extern "C" {

PGconn* PQconnectdb(const char* conninfo) { OVERHEAD_REAL(PQconnectdb); return real(conninfo); }
PGconn* PQconnectdbParams(const char* const* keywords, const char* const* values, int expand_dbname) {
  OVERHEAD_REAL(PQconnectdbParams);
  return real(keywords, values, expand_dbname);
}
void PQfinish(PGconn* conn) { OVERHEAD_REAL(PQfinish); real(conn); }
void PQreset(PGconn* conn) { OVERHEAD_REAL(PQreset); real(conn); }
ConnStatusType PQstatus(const PGconn* conn) { OVERHEAD_REAL(PQstatus); return real(conn); }
PGTransactionStatusType PQtransactionStatus(const PGconn* conn) { OVERHEAD_REAL(PQtransactionStatus); return real(conn); }
int PQserverVersion(const PGconn* conn) { OVERHEAD_REAL(PQserverVersion); return real(conn); }
char* PQerrorMessage(const PGconn* conn) { OVERHEAD_REAL(PQerrorMessage); return real(conn); }
int PQsocket(const PGconn* conn) { OVERHEAD_REAL(PQsocket); return real(conn); }

PGresult* PQexec(PGconn* conn, const char* query) { OVERHEAD_REAL(PQexec); return real(conn, query); }
PGresult* PQexecParams(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                       const char* const* param_values, const int* param_lengths, const int* param_formats,
                       int result_format) {
  OVERHEAD_REAL(PQexecParams);
  return real(conn, command, n_params, param_types, param_values, param_lengths, param_formats, result_format);
}
PGresult* PQprepare(PGconn* conn, const char* stmt_name, const char* query, int n_params, const Oid* param_types) {
  OVERHEAD_REAL(PQprepare);
  return real(conn, stmt_name, query, n_params, param_types);
}
PGresult* PQexecPrepared(PGconn* conn, const char* stmt_name, int n_params, const char* const* param_values,
                         const int* param_lengths, const int* param_formats, int result_format) {
  OVERHEAD_REAL(PQexecPrepared);
  return real(conn, stmt_name, n_params, param_values, param_lengths, param_formats, result_format);
}
int PQsendQuery(PGconn* conn, const char* query) { OVERHEAD_REAL(PQsendQuery); return real(conn, query); }
int PQsendQueryParams(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                      const char* const* param_values, const int* param_lengths, const int* param_formats,
                      int result_format) {
  OVERHEAD_REAL(PQsendQueryParams);
  return real(conn, command, n_params, param_types, param_values, param_lengths, param_formats, result_format);
}
int PQsendPrepare(PGconn* conn, const char* stmt_name, const char* query, int n_params, const Oid* param_types) {
  OVERHEAD_REAL(PQsendPrepare);
  return real(conn, stmt_name, query, n_params, param_types);
}
int PQsendQueryPrepared(PGconn* conn, const char* stmt_name, int n_params, const char* const* param_values,
                        const int* param_lengths, const int* param_formats, int result_format) {
  OVERHEAD_REAL(PQsendQueryPrepared);
  return real(conn, stmt_name, n_params, param_values, param_lengths, param_formats, result_format);
}
int PQsetSingleRowMode(PGconn* conn) { OVERHEAD_REAL(PQsetSingleRowMode); return real(conn); }
PGresult* PQgetResult(PGconn* conn) { OVERHEAD_REAL(PQgetResult); return real(conn); }
int PQisBusy(PGconn* conn) { OVERHEAD_REAL(PQisBusy); return real(conn); }
int PQconsumeInput(PGconn* conn) { OVERHEAD_REAL(PQconsumeInput); return real(conn); }
int PQsetnonblocking(PGconn* conn, int arg) { OVERHEAD_REAL(PQsetnonblocking); return real(conn, arg); }
int PQflush(PGconn* conn) { OVERHEAD_REAL(PQflush); return real(conn); }
int PQenterPipelineMode(PGconn* conn) { OVERHEAD_REAL(PQenterPipelineMode); return real(conn); }
int PQexitPipelineMode(PGconn* conn) { OVERHEAD_REAL(PQexitPipelineMode); return real(conn); }
int PQpipelineSync(PGconn* conn) { OVERHEAD_REAL(PQpipelineSync); return real(conn); }
PGpipelineStatus PQpipelineStatus(const PGconn* conn) { OVERHEAD_REAL(PQpipelineStatus); return real(conn); }

ExecStatusType PQresultStatus(const PGresult* res) { OVERHEAD_REAL(PQresultStatus); return real(res); }
char* PQresStatus(ExecStatusType status) { OVERHEAD_REAL(PQresStatus); return real(status); }
char* PQresultErrorMessage(const PGresult* res) { OVERHEAD_REAL(PQresultErrorMessage); return real(res); }
char* PQresultErrorField(const PGresult* res, int fieldcode) {
  OVERHEAD_REAL(PQresultErrorField);
  return real(res, fieldcode);
}
int PQntuples(const PGresult* res) { OVERHEAD_REAL(PQntuples); return real(res); }
int PQnfields(const PGresult* res) { OVERHEAD_REAL(PQnfields); return real(res); }
char* PQfname(const PGresult* res, int field) { OVERHEAD_REAL(PQfname); return real(res, field); }
char* PQcmdTuples(PGresult* res) { OVERHEAD_REAL(PQcmdTuples); return real(res); }
char* PQgetvalue(const PGresult* res, int row, int field) { OVERHEAD_REAL(PQgetvalue); return real(res, row, field); }
int PQgetlength(const PGresult* res, int row, int field) { OVERHEAD_REAL(PQgetlength); return real(res, row, field); }
int PQgetisnull(const PGresult* res, int row, int field) { OVERHEAD_REAL(PQgetisnull); return real(res, row, field); }
void PQclear(PGresult* res) { OVERHEAD_REAL(PQclear); real(res); }
void PQfreemem(void* ptr) { OVERHEAD_REAL(PQfreemem); real(ptr); }
char* PQescapeLiteral(PGconn* conn, const char* str, size_t len) { OVERHEAD_REAL(PQescapeLiteral); return real(conn, str, len); }
char* PQescapeIdentifier(PGconn* conn, const char* str, size_t len) {
  OVERHEAD_REAL(PQescapeIdentifier);
  return real(conn, str, len);
}

}  // extern "C"
