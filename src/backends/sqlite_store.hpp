// The embedded record store (`sqlite:PATH`): one table keyed by (experiment_tokenizer, id), WAL.
// An upsert replaces the row with the same key, so a replayed record overwrites, never
// duplicates; a batch is one transaction. Stamps that arrive after the record (ports::StampPatch) are
// kept when a replayed record carries none (store.hpp's replay rule). A batch is all or nothing:
// it never fails per record. `timeout_ms` is SQLite's busy timeout.
#pragma once

#include <mutex>

#include "backends/sqlite_db.hpp"
#include "ports/backend_url.hpp"
#include "ports/store.hpp"

namespace overhead::backends {

class SqliteStore final : public ports::Store {
 public:
  SqliteStore(std::string url, const std::string& path, std::chrono::milliseconds call_timeout = ports::kDefaultCallTimeout);
  // A reader (backends::Access::read_only): the file is opened read-only and never changed. A file
  // with no `records` table is an error saying so; columns an older version lacked read as empty.
  // upsert and update_stamps throw.
  struct ReadOnly {};
  SqliteStore(ReadOnly, std::string url, const std::string& path, std::chrono::milliseconds call_timeout = ports::kDefaultCallTimeout);

  void upsert(const ports::Record& record) override;
  std::vector<ports::UpsertFailure> upsert_batch(std::span<const ports::Record> records) override;
  std::size_t update_stamps(std::span<const ports::StampPatch> patches) override;
  void scan(const std::string& experiment, const std::function<void(const ports::Record&)>& fn) override;
  const std::string& url() const override { return url_; }

 private:
  void upsert_locked(const ports::Record& r);

  const std::string url_;
  std::mutex mutex_;
  SqliteDb db_;
  SqliteStatement upsert_, stamps_, scan_all_, scan_one_;
};

// The `sqlite:` arm of open_store, and its read-only form.
std::unique_ptr<ports::Store> open_sqlite_store(const ports::BackendUrl& url);
std::unique_ptr<ports::Store> open_sqlite_store_read_only(const ports::BackendUrl& url);

}  // namespace overhead::backends
