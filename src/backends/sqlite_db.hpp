// A thin RAII layer over libsqlite3 shared by the SQLite store and the SQLite queue: one
// connection in WAL mode with a busy timeout (so several processes can share a file), and
// prepared statements that are compiled once and reset after each use.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "ports/backend_url.hpp"  // kDefaultCallTimeout

struct sqlite3;
struct sqlite3_stmt;

namespace overhead::backends {

class SqliteStatement {
 public:
  SqliteStatement() = default;
  // False for a statement never prepared (a default-constructed one).
  explicit operator bool() const { return stmt_ != nullptr; }
  SqliteStatement(sqlite3* db, std::string_view sql, const std::string& what);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& o) noexcept : stmt_(o.stmt_), what_(std::move(o.what_)) { o.stmt_ = nullptr; }
  SqliteStatement& operator=(SqliteStatement&& o) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, std::int64_t v);
  SqliteStatement& bind_real(int index, double v);  // REAL: the IEEE double itself (a named call: no overload for int literals to be ambiguous with)
  SqliteStatement& bind(int index, std::string_view v);  // bound as TEXT, copied by SQLite
  // Bound as TEXT without a copy: `v` must stay valid until the statement is reset (run() resets),
  // which saves a malloc and a copy per column on the upsert of every record.
  SqliteStatement& bind_borrowed(int index, std::string_view v);
  SqliteStatement& bind_null(int index);
  // Steps once: true when a row is ready, false when done. Throws StoreError on failure.
  bool step();
  // Steps to completion (for statements without rows).
  void run();
  void reset();  // reset + clear bindings, ready for the next use

  std::int64_t column_int(int i) const;
  double column_double(int i) const;  // NULL reads as 0
  bool column_is_null(int i) const;
  std::string_view column_text(int i) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  std::string what_;
};

class SqliteDb {
 public:
  // Opens (creating) the file, in a folder that must exist, in WAL mode with synchronous=NORMAL: durable against a process
  // crash, which is what at-least-once delivery needs. `what` prefixes error messages;
  // `busy_timeout` bounds the wait for another connection's write lock (then a transient
  // StoreError). Errors are StoreError, transient for a busy or locked database only.
  SqliteDb(const std::string& path, const std::string& what,
           std::chrono::milliseconds busy_timeout = ports::kDefaultCallTimeout);
  // A reader's connection: opens an existing file read-only (SQLITE_OPEN_READONLY) and sets no
  // journal mode, so neither the file nor its header changes, whatever the file holds.
  struct ReadOnly {};
  SqliteDb(ReadOnly, const std::string& path, const std::string& what,
           std::chrono::milliseconds busy_timeout = ports::kDefaultCallTimeout);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(const std::string& sql);
  SqliteStatement prepare(std::string_view sql) { return SqliteStatement(db_, sql, what_); }
  std::int64_t changes() const;
  std::int64_t last_insert_rowid() const;
  sqlite3* handle() { return db_; }
  const std::string& what() const { return what_; }

 private:
  sqlite3* db_ = nullptr;
  std::string what_;
};

}  // namespace overhead::backends
