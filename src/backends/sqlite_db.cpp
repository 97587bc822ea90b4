#include "backends/sqlite_db.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

#include "ports/errors.hpp"

namespace overhead::backends {


using ports::Failure;
using ports::StoreError;

namespace {
// A busy or locked database (another process holds the write lock past the busy timeout) may be
// free on the next try; every other SQLite error (corrupt file, full disk, bad SQL, read-only
// file) will not go away by itself.
Failure classify(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_BUSY || primary == SQLITE_LOCKED ? Failure::transient : Failure::permanent;
}
}  // namespace

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql, const std::string& what) : what_(what) {
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  if (rc != SQLITE_OK) throw StoreError(what_ + ": " + sqlite3_errmsg(db) + " in: " + std::string(sql), classify(rc));
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& o) noexcept {
  if (this != &o) {
    sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    what_ = std::move(o.what_);
    o.stmt_ = nullptr;
  }
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::int64_t v) {
  sqlite3_bind_int64(stmt_, index, v);
  return *this;
}

SqliteStatement& SqliteStatement::bind_real(int index, double v) {
  sqlite3_bind_double(stmt_, index, v);
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, std::string_view v) {
  sqlite3_bind_text(stmt_, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::bind_borrowed(int index, std::string_view v) {
  sqlite3_bind_text(stmt_, index, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  return *this;
}

SqliteStatement& SqliteStatement::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const std::string msg = sqlite3_errmsg(sqlite3_db_handle(stmt_));
  sqlite3_reset(stmt_);
  throw StoreError(what_ + ": " + msg, classify(rc));
}

void SqliteStatement::run() {
  while (step()) {
  }
  reset();
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::int64_t SqliteStatement::column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
double SqliteStatement::column_double(int i) const { return sqlite3_column_double(stmt_, i); }
bool SqliteStatement::column_is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
std::string_view SqliteStatement::column_text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, i))) : std::string_view();
}

SqliteDb::SqliteDb(const std::string& path, const std::string& what, std::chrono::milliseconds busy_timeout)
    : what_(what) {
  // A missing folder is the user's mistake far more often than a wish for new folders: say so
  // rather than create them anywhere. The commands make their own --out folder.
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw StoreError(what_ + ": folder " + parent.string() +
                     " does not exist; create it first (a command makes only its own --out folder)");
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(what_ + ": cannot open: " + msg, classify(rc));
  }
  // The per-call deadline: a call waits at most this long for another process's write lock.
  sqlite3_busy_timeout(db_, static_cast<int>(std::min<std::int64_t>(busy_timeout.count(), 1 << 30)));
  // Switching a new file to WAL takes an exclusive lock, and SQLite answers "database is locked"
  // at once, without its busy handler, when another process is doing the same (two runs opening
  // one new store together): wait for it here, within the same deadline.
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout;
  for (auto pause = std::chrono::milliseconds(2);; pause = std::min(pause * 2, std::chrono::milliseconds(100))) {
    const int wal = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (wal == SQLITE_OK) break;
    const int primary = wal & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() + pause > deadline) {
      exec("PRAGMA journal_mode=WAL");  // throws the error, classified as every other
      break;
    }
    std::this_thread::sleep_for(pause);
  }
  exec("PRAGMA synchronous=NORMAL");
}

SqliteDb::SqliteDb(ReadOnly, const std::string& path, const std::string& what, std::chrono::milliseconds busy_timeout)
    : what_(what) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(what_ + ": cannot open read-only: " + msg, classify(rc));
  }
  sqlite3_busy_timeout(db_, static_cast<int>(std::min<std::int64_t>(busy_timeout.count(), 1 << 30)));
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw StoreError(what_ + ": " + msg + " in: " + sql, classify(rc));
  }
}

std::int64_t SqliteDb::changes() const { return sqlite3_changes64(db_); }
std::int64_t SqliteDb::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

}  // namespace overhead::backends
