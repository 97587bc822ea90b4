// The embedded record store (`sqlite:PATH`): one table keyed by (experiment_tokenizer, id), WAL.
// An upsert replaces the row with the same key, so a replayed record overwrites, never
// duplicates; a batch is one transaction. Stamps that arrive after the record (StampPatch) are
// kept when a replayed record carries none.
#pragma once

#include <mutex>

#include "pipe/sqlite_db.hpp"
#include "pipe/store.hpp"

namespace overhead::pipe {

class SqliteStore final : public Store {
 public:
  SqliteStore(std::string url, const std::string& path);

  void upsert(const Record& record) override;
  void upsert_batch(std::span<const Record> records) override;
  std::size_t update_stamps(std::span<const StampPatch> patches) override;
  void scan(const std::string& experiment, const std::function<void(const Record&)>& fn) override;
  std::vector<std::string> experiments() override;
  const std::string& url() const override { return url_; }

 private:
  void upsert_locked(const Record& r);

  const std::string url_;
  std::mutex mutex_;
  SqliteDb db_;
  SqliteStatement upsert_, stamps_, scan_all_, scan_one_, experiments_;
};

}  // namespace overhead::pipe
