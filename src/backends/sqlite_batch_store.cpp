#include "backends/sqlite_batch_store.hpp"

#include <mutex>

#include "backends/sqlite_db.hpp"

namespace overhead::backends {
namespace {

using ports::BatchDocument;
using ports::BatchKind;

const char* table_of(BatchKind kind) { return kind == BatchKind::file ? "batch_files" : "batches"; }

class SqliteBatchStore final : public ports::BatchStore {
 public:
  explicit SqliteBatchStore(const ports::BackendUrl& u)
      : url_(u.redacted()), db_(u.path, "batch store " + u.redacted(), u.call_timeout()) {
    for (const char* t : {"batch_files", "batches"})
      db_.exec(std::string("CREATE TABLE IF NOT EXISTS ") + t +
               " (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, open INTEGER NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;"
               "CREATE INDEX IF NOT EXISTS " + t + "_order ON " + t + "(created_at, id);");
  }

  void put(BatchKind kind, const BatchDocument& doc) override {
    std::lock_guard lock(mutex_);
    auto st = db_.prepare(std::string("INSERT OR REPLACE INTO ") + table_of(kind) + " (id, created_at, open, body) VALUES (?1, ?2, ?3, ?4)");
    st.bind(1, doc.id).bind(2, doc.created_at).bind(3, std::int64_t{doc.open ? 1 : 0}).bind(4, doc.body).run();
  }

  std::optional<BatchDocument> get(BatchKind kind, const std::string& id) override {
    std::lock_guard lock(mutex_);
    auto st = db_.prepare(std::string("SELECT id, created_at, open, body FROM ") + table_of(kind) + " WHERE id = ?1");
    st.bind(1, id);
    if (!st.step()) return std::nullopt;
    return row(st);
  }

  bool remove(BatchKind kind, const std::string& id) override {
    std::lock_guard lock(mutex_);
    db_.prepare(std::string("DELETE FROM ") + table_of(kind) + " WHERE id = ?1").bind(1, id).run();
    return db_.changes() > 0;
  }

  std::vector<BatchDocument> list(BatchKind kind, const std::string& after, std::size_t limit) override {
    std::lock_guard lock(mutex_);
    const std::string t = table_of(kind);
    std::vector<BatchDocument> out;
    SqliteStatement st;
    std::optional<BatchDocument> from;
    if (!after.empty()) {
      auto at = db_.prepare("SELECT id, created_at, open, body FROM " + t + " WHERE id = ?1");
      at.bind(1, after);
      if (at.step()) from = row(at);
    }
    if (from) {
      st = db_.prepare("SELECT id, created_at, open, body FROM " + t +
                       " WHERE created_at < ?1 OR (created_at = ?1 AND id < ?2) ORDER BY created_at DESC, id DESC LIMIT ?3");
      st.bind(1, from->created_at).bind(2, from->id).bind(3, static_cast<std::int64_t>(limit));
    } else {
      st = db_.prepare("SELECT id, created_at, open, body FROM " + t + " ORDER BY created_at DESC, id DESC LIMIT ?1");
      st.bind(1, static_cast<std::int64_t>(limit));
    }
    while (st.step()) out.push_back(row(st));
    return out;
  }

  std::vector<BatchDocument> open_batches() override {
    std::lock_guard lock(mutex_);
    auto st = db_.prepare("SELECT id, created_at, open, body FROM batches WHERE open = 1");
    std::vector<BatchDocument> out;
    while (st.step()) out.push_back(row(st));
    return out;
  }

  const std::string& url() const override { return url_; }

 private:
  static BatchDocument row(const SqliteStatement& st) {
    return BatchDocument{std::string(st.column_text(0)), st.column_int(1), st.column_int(2) != 0, std::string(st.column_text(3))};
  }

  std::string url_;
  std::mutex mutex_;  // one connection: its statements are used one at a time
  SqliteDb db_;
};

}  // namespace

std::unique_ptr<ports::BatchStore> open_sqlite_batch_store(const ports::BackendUrl& url) {
  url.check_params({"timeout_ms"});
  return std::make_unique<SqliteBatchStore>(url);
}

}  // namespace overhead::backends
