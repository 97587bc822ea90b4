#include "backends/sqlite_store.hpp"

#include <set>
#include <stdexcept>
#include <vector>

#include "ports/backend_url.hpp"
#include "ports/errors.hpp"
#include "ports/record_fields.hpp"

namespace overhead::backends {


using ports::BackendUrl;
using ports::FieldType;
using ports::FieldValue;
using ports::kRecordFields;
using ports::Record;
using ports::RecordField;
using ports::StampPatch;
using ports::Store;
using ports::StoreError;
using ports::UpsertFailure;

namespace {

// A field's SQL type: REAL for a price, INTEGER for integers and booleans.
const char* sql_type(FieldType t) {
  return t == FieldType::text ? " TEXT" : t == FieldType::real ? " REAL" : " INTEGER";
}

// The schema and statements, from the record field table (ports/record_fields.hpp). Columns named
// in `absent` (a reader's view of an older table) are read as NULL.
std::string record_columns(const std::set<std::string>& absent = {}) {
  std::string out;
  for (const auto& f : kRecordFields) {
    const std::string c(f.column);
    out += (out.empty() ? "" : ", ") + (absent.count(c) ? "NULL AS " + c : c);
  }
  return out;
}

std::string create_table_sql() {
  std::string cols, keys;
  for (const auto& f : kRecordFields) {
    cols += std::string(f.column) + sql_type(f.type) + (f.required ? " NOT NULL" : "") + ", ";
    if (f.key) keys += (keys.empty() ? "" : ", ") + std::string(f.column);
  }
  return "CREATE TABLE IF NOT EXISTS records (" + cols + "PRIMARY KEY (" + keys + ")) WITHOUT ROWID;"
         "CREATE INDEX IF NOT EXISTS records_experiment ON records(experiment);";
}

std::vector<const RecordField*> missing_columns(SqliteDb& db) {
  std::set<std::string> have;
  auto info = db.prepare("SELECT name FROM pragma_table_info('records')");
  while (info.step()) have.insert(std::string(info.column_text(0)));
  info.reset();
  std::vector<const RecordField*> missing;
  for (const auto& f : kRecordFields)
    if (f.added_later && !have.count(std::string(f.column))) missing.push_back(&f);
  return missing;
}

// A table created before a field was added (RecordField::added_later) gets its column now, so a
// store written by an older version keeps working; its old rows read the field as empty.
void add_missing_columns(SqliteDb& db) {
  for (const RecordField* f : missing_columns(db))
    db.exec("ALTER TABLE records ADD COLUMN " + std::string(f->column) + sql_type(f->type));
}

// A replay of a record (redelivery after a crash) carries publish_acked/input_deleted = 0;
// keep what a patch already set rather than erase it (store.hpp's replay rule).
std::string upsert_sql() {
  std::string values, keys, updates;
  for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
    const auto& f = kRecordFields[k];
    const std::string c(f.column);
    values += (k ? "," : "") + std::string("?") + std::to_string(k + 1);
    if (f.key) {
      keys += (keys.empty() ? "" : ", ") + c;
      continue;
    }
    updates += updates.empty() ? " " : ", ";
    if (f.patched) updates += c + "=CASE WHEN excluded." + c + "<>0 THEN excluded." + c + " ELSE records." + c + " END";
    else updates += c + "=excluded." + c;
  }
  return "INSERT INTO records(" + record_columns() + ") VALUES(" + values + ") ON CONFLICT(" + keys + ") DO UPDATE SET" + updates;
}

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

SqliteStore::SqliteStore(std::string url, const std::string& path, std::chrono::milliseconds call_timeout)
    : url_(std::move(url)), db_(path, url_, call_timeout) {
  db_.exec(create_table_sql());
  // Two processes opening an old file at once: the second ALTER would fail on the column the
  // first just added, so the check and the change are one write transaction. A current table
  // needs no write lock at all: opening must not wait on another process's long write.
  if (!missing_columns(db_).empty()) transaction(db_, [&] { add_missing_columns(db_); });
  upsert_ = db_.prepare(upsert_sql());
  stamps_ = db_.prepare(
      "UPDATE records SET publish_acked=CASE WHEN ?3<>0 THEN ?3 ELSE publish_acked END,"
      " input_deleted=CASE WHEN ?4<>0 THEN ?4 ELSE input_deleted END WHERE experiment_tokenizer=?1 AND id=?2");
  scan_all_ = db_.prepare("SELECT " + record_columns() + " FROM records ORDER BY experiment_tokenizer, id");
  scan_one_ = db_.prepare("SELECT " + record_columns() +
                          " FROM records WHERE experiment=?1 ORDER BY experiment_tokenizer, id");
}

SqliteStore::SqliteStore(ReadOnly, std::string url, const std::string& path, std::chrono::milliseconds call_timeout)
    : url_(std::move(url)), db_(SqliteDb::ReadOnly{}, path, url_, call_timeout) {
  // Reading the schema is the first read of the file: a file that is no SQLite database fails here.
  auto has_table = db_.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name='records'");
  const bool found = has_table.step();
  has_table.reset();
  if (!found) throw StoreError(url_ + ": no table 'records': not a record store (give the store a run wrote)");
  std::set<std::string> absent;
  for (const RecordField* f : missing_columns(db_)) absent.insert(std::string(f->column));
  scan_all_ = db_.prepare("SELECT " + record_columns(absent) + " FROM records ORDER BY experiment_tokenizer, id");
  scan_one_ = db_.prepare("SELECT " + record_columns(absent) + " FROM records WHERE experiment=?1 ORDER BY experiment_tokenizer, id");
}

void SqliteStore::upsert_locked(const Record& r) {
  if (!upsert_) throw StoreError(url_ + ": opened read-only");
  for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
    const int index = static_cast<int>(k + 1);
    const FieldValue v = kRecordFields[k].get(r);
    // The record outlives run(), which resets the statement: its strings need no copy.
    if (const auto* s = std::get_if<std::string_view>(&v)) upsert_.bind_borrowed(index, *s);
    else if (const auto* i = std::get_if<std::int64_t>(&v)) upsert_.bind(index, *i);
    else if (const auto* d = std::get_if<double>(&v)) upsert_.bind_real(index, *d);
    else upsert_.bind_null(index);
  }
  upsert_.run();
}

void SqliteStore::upsert(const Record& record) {
  std::lock_guard lock(mutex_);
  upsert_locked(record);  // autocommit: one transaction
}

std::vector<UpsertFailure> SqliteStore::upsert_batch(std::span<const Record> records) {
  if (records.empty()) return {};
  std::lock_guard lock(mutex_);
  transaction(db_, [&] {
    for (const auto& r : records) upsert_locked(r);
  });
  return {};
}

std::size_t SqliteStore::update_stamps(std::span<const StampPatch> patches) {
  if (!stamps_) throw StoreError(url_ + ": opened read-only");
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
      for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
        const auto& f = kRecordFields[k];
        const int c = static_cast<int>(k);
        if (f.type == FieldType::text) f.set(r, s.column_text(c));
        else if (f.type == FieldType::optional_integer && s.column_is_null(c)) f.set(r, FieldValue());
        else if (f.type == FieldType::real) f.set(r, s.column_double(c));
        else f.set(r, s.column_int(c));
      }
      fn(r);
    }
  } catch (...) {
    s.reset();
    throw;
  }
  s.reset();
}

std::unique_ptr<Store> open_sqlite_store(const BackendUrl& u) {
  u.check_params({"timeout_ms"});
  if (u.path.empty()) throw std::invalid_argument(u.describe("store", "expected sqlite:PATH"));
  return std::make_unique<SqliteStore>(u.redacted(), u.path, u.call_timeout());
}

std::unique_ptr<Store> open_sqlite_store_read_only(const BackendUrl& u) {
  u.check_params({"timeout_ms"});
  if (u.path.empty()) throw std::invalid_argument(u.describe("store", "expected sqlite:PATH"));
  return std::make_unique<SqliteStore>(SqliteStore::ReadOnly{}, u.redacted(), u.path, u.call_timeout());
}

}  // namespace overhead::backends
