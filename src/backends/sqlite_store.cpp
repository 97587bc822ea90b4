#include "backends/sqlite_store.hpp"

#include <stdexcept>

#include "pipe/backend_url.hpp"
#include "pipe/errors.hpp"

namespace overhead::backends {

using namespace overhead::pipe;

namespace {
constexpr const char* kColumns =
    "experiment_tokenizer, id, model, start_time, end_time, token_count, api_input, api_output, experiment,"
    " tokenizer, case_number, worker, seq, batch, batch_boundary, received, render_start, render_end,"
    " encode_end, publish_start, publish_acked, input_deleted, prompt_chars, prompt_bytes";

template <class Fn>
void transaction(SqliteDb& db, Fn&& fn) {
  db.exec("BEGIN IMMEDIATE");
  try {
    fn();
    db.exec("COMMIT");
  } catch (...) {
    db.exec("ROLLBACK");
    throw;
  }
}
}  // namespace

SqliteStore::SqliteStore(std::string url, const std::string& path) : url_(std::move(url)), db_(path, url_) {
  db_.exec(
      "CREATE TABLE IF NOT EXISTS records ("
      " experiment_tokenizer TEXT NOT NULL, id TEXT NOT NULL, model TEXT, start_time TEXT, end_time TEXT,"
      " token_count INTEGER, api_input INTEGER, api_output INTEGER, experiment TEXT NOT NULL, tokenizer TEXT,"
      " case_number INTEGER, worker TEXT, seq INTEGER, batch INTEGER, batch_boundary INTEGER,"
      " received INTEGER, render_start INTEGER, render_end INTEGER, encode_end INTEGER, publish_start INTEGER,"
      " publish_acked INTEGER, input_deleted INTEGER, prompt_chars INTEGER, prompt_bytes INTEGER,"
      " PRIMARY KEY (experiment_tokenizer, id)) WITHOUT ROWID;"
      "CREATE INDEX IF NOT EXISTS records_experiment ON records(experiment);");
  // A replay of a record (redelivery after a crash) carries publish_acked/input_deleted = 0;
  // keep what a patch already set rather than erase it.
  upsert_ = db_.prepare(std::string("INSERT INTO records(") + kColumns +
                        ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,?24)"
                        " ON CONFLICT(experiment_tokenizer, id) DO UPDATE SET"
                        " model=excluded.model, start_time=excluded.start_time, end_time=excluded.end_time,"
                        " token_count=excluded.token_count, api_input=excluded.api_input, api_output=excluded.api_output,"
                        " experiment=excluded.experiment, tokenizer=excluded.tokenizer, case_number=excluded.case_number,"
                        " worker=excluded.worker, seq=excluded.seq, batch=excluded.batch, batch_boundary=excluded.batch_boundary,"
                        " received=excluded.received, render_start=excluded.render_start, render_end=excluded.render_end,"
                        " encode_end=excluded.encode_end, publish_start=excluded.publish_start,"
                        " publish_acked=CASE WHEN excluded.publish_acked<>0 THEN excluded.publish_acked ELSE records.publish_acked END,"
                        " input_deleted=CASE WHEN excluded.input_deleted<>0 THEN excluded.input_deleted ELSE records.input_deleted END,"
                        " prompt_chars=excluded.prompt_chars, prompt_bytes=excluded.prompt_bytes");
  stamps_ = db_.prepare(
      "UPDATE records SET publish_acked=CASE WHEN ?3<>0 THEN ?3 ELSE publish_acked END,"
      " input_deleted=CASE WHEN ?4<>0 THEN ?4 ELSE input_deleted END WHERE experiment_tokenizer=?1 AND id=?2");
  scan_all_ = db_.prepare(std::string("SELECT ") + kColumns + " FROM records ORDER BY experiment_tokenizer, id");
  scan_one_ = db_.prepare(std::string("SELECT ") + kColumns +
                          " FROM records WHERE experiment=?1 ORDER BY experiment_tokenizer, id");
  experiments_ = db_.prepare("SELECT DISTINCT experiment FROM records ORDER BY experiment");
}

void SqliteStore::upsert_locked(const Record& r) {
  auto& s = upsert_;
  s.bind(1, r.experiment_tokenizer).bind(2, r.id).bind(3, r.model).bind(4, r.start_time).bind(5, r.end_time);
  s.bind(6, r.token_count);
  if (r.api_input) s.bind(7, *r.api_input); else s.bind_null(7);
  if (r.api_output) s.bind(8, *r.api_output); else s.bind_null(8);
  s.bind(9, r.experiment).bind(10, r.tokenizer).bind(11, static_cast<std::int64_t>(r.case_number)).bind(12, r.worker);
  s.bind(13, r.seq).bind(14, r.batch).bind(15, static_cast<std::int64_t>(r.batch_boundary));
  s.bind(16, r.received).bind(17, r.render_start).bind(18, r.render_end).bind(19, r.encode_end);
  s.bind(20, r.publish_start).bind(21, r.publish_acked).bind(22, r.input_deleted);
  s.bind(23, r.prompt_chars).bind(24, r.prompt_bytes);
  s.run();
}

void SqliteStore::upsert(const Record& record) {
  std::lock_guard lock(mutex_);
  upsert_locked(record);  // autocommit: one transaction
}

void SqliteStore::upsert_batch(std::span<const Record> records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  transaction(db_, [&] {
    for (const auto& r : records) upsert_locked(r);
  });
}

std::size_t SqliteStore::update_stamps(std::span<const StampPatch> patches) {
  std::size_t found = 0;
  std::lock_guard lock(mutex_);
  transaction(db_, [&] {
    for (const auto& p : patches) {
      stamps_.bind(1, p.experiment_tokenizer).bind(2, p.id).bind(3, p.publish_acked).bind(4, p.input_deleted).run();
      found += static_cast<std::size_t>(db_.changes());
    }
  });
  return found;
}

void SqliteStore::scan(const std::string& experiment, const std::function<void(const Record&)>& fn) {
  std::lock_guard lock(mutex_);
  auto& s = experiment.empty() ? scan_all_ : scan_one_;
  if (!experiment.empty()) s.bind(1, experiment);
  try {
    Record r;
    while (s.step()) {
      r.experiment_tokenizer = s.column_text(0);
      r.id = s.column_text(1);
      r.model = s.column_text(2);
      r.start_time = s.column_text(3);
      r.end_time = s.column_text(4);
      r.token_count = s.column_int(5);
      r.api_input = s.column_is_null(6) ? std::nullopt : std::optional<std::int64_t>(s.column_int(6));
      r.api_output = s.column_is_null(7) ? std::nullopt : std::optional<std::int64_t>(s.column_int(7));
      r.experiment = s.column_text(8);
      r.tokenizer = s.column_text(9);
      r.case_number = static_cast<int>(s.column_int(10));
      r.worker = s.column_text(11);
      r.seq = s.column_int(12);
      r.batch = s.column_int(13);
      r.batch_boundary = s.column_int(14) != 0;
      r.received = s.column_int(15);
      r.render_start = s.column_int(16);
      r.render_end = s.column_int(17);
      r.encode_end = s.column_int(18);
      r.publish_start = s.column_int(19);
      r.publish_acked = s.column_int(20);
      r.input_deleted = s.column_int(21);
      r.prompt_chars = s.column_int(22);
      r.prompt_bytes = s.column_int(23);
      fn(r);
    }
  } catch (...) {
    s.reset();
    throw;
  }
  s.reset();
}

std::vector<std::string> SqliteStore::experiments() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  while (experiments_.step()) out.emplace_back(experiments_.column_text(0));
  experiments_.reset();
  return out;
}

std::unique_ptr<Store> open_sqlite_store(const BackendUrl& u) {
  u.check_params({});
  if (u.path.empty()) throw std::invalid_argument(u.describe("store", "expected sqlite:PATH"));
  return std::make_unique<SqliteStore>(u.redacted(), u.path);
}

}  // namespace overhead::backends
