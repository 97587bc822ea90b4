#include "backends/postgres_store.hpp"

#include <charconv>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>

#include "ports/record_fields.hpp"
#include "util/number_text.hpp"

namespace overhead::backends {


using ports::BackendUrl;
using ports::Failure;
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

// PostgreSQL allows 65535 parameters per statement, one per field of each row: the rows that fit.
// Batches are far smaller (≤ 10 from a queue); a larger one is split inside one transaction.
constexpr std::size_t kRowsPerStatement = 65535 / ports::kRecordFields.size();

// A field's column type: DOUBLE PRECISION for a price, BIGINT for integers and booleans.
const char* sql_type(FieldType t) {
  return t == FieldType::text ? " TEXT" : t == FieldType::real ? " DOUBLE PRECISION" : " BIGINT";
}

// "name" with inner quotes doubled: any table or schema name from the URL is taken literally.
std::string quote_ident(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The record's columns; one in `absent` is selected as NULL (an older table's reader).
std::string column_list(const std::set<std::string>& absent = {}) {
  std::string out;
  for (const auto& f : kRecordFields) {
    const std::string c(f.column);
    out += (out.empty() ? "" : ", ") + (absent.count(c) ? "NULL AS " + c : c);
  }
  return out;
}

std::string create_sql(const std::string& schema, const std::string& table, const std::string& index) {
  std::string cols, keys;
  for (const auto& f : kRecordFields) {
    cols += std::string(f.column) + sql_type(f.type) + (f.required ? " NOT NULL" : "") + ", ";
    if (f.key) keys += (keys.empty() ? "" : ", ") + std::string(f.column);
  }
  // Consumers on many machines may open the store at once; CREATE ... IF NOT EXISTS still races
  // on the catalog, so creation is serialised by a transaction-scoped advisory lock.
  // IF NOT EXISTS on an existing table sends a NOTICE, which libpq prints on stderr: one noise
  // line per consumer start. Only warnings and errors are wanted, for this transaction.
  std::string sql = "BEGIN; SET LOCAL client_min_messages = warning; "
                    "SELECT pg_advisory_xact_lock(hashtext('overhead record store'));";
  if (!schema.empty()) sql += "CREATE SCHEMA IF NOT EXISTS " + quote_ident(schema) + ";";
  sql += "CREATE TABLE IF NOT EXISTS " + table + " (" + cols + "PRIMARY KEY (" + keys + "));";
  sql += "CREATE INDEX IF NOT EXISTS " + quote_ident(index) + " ON " + table + " (experiment);";
  // A table created before a field was added (RecordField::added_later) gets its column.
  for (const auto& f : kRecordFields)
    if (f.added_later)
      sql += "ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + std::string(f.column) + sql_type(f.type) + ";";
  return sql + "COMMIT;";
}

// The replay rule (store.hpp): a patched stamp whose new value is 0 keeps the stored one.
std::string on_conflict_sql(const std::string& table) {
  std::string keys, updates;
  for (const auto& f : kRecordFields) {
    const std::string c(f.column);
    if (f.key) {
      keys += (keys.empty() ? "" : ", ") + c;
      continue;
    }
    updates += updates.empty() ? " " : ", ";
    if (f.patched) updates += c + "=CASE WHEN EXCLUDED." + c + "<>0 THEN EXCLUDED." + c + " ELSE " + table + "." + c + " END";
    else updates += c + "=EXCLUDED." + c;
  }
  return " ON CONFLICT (" + keys + ") DO UPDATE SET" + updates;
}

void add_params(const Record& r, std::vector<PgParam>& out) {
  for (const auto& f : kRecordFields) {
    const FieldValue v = f.get(r);
    if (const auto* s = std::get_if<std::string_view>(&v)) out.push_back({std::string(*s), false});
    else if (const auto* i = std::get_if<std::int64_t>(&v)) out.push_back({std::to_string(*i), false});
    else if (const auto* d = std::get_if<double>(&v)) out.push_back({util::shortest_double_text(*d), false});
    else out.push_back({{}, true});
  }
}

std::int64_t parse_int(const char* text, const RecordField& f) {
  std::int64_t v = 0;
  const std::string_view s(text);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw StoreError("column " + std::string(f.column) + ": not an integer: " + std::string(s), Failure::permanent);
  return v;
}

// PostgreSQL's text of a DOUBLE PRECISION: digits and an exponent, or Infinity/-Infinity/NaN
// (std::from_chars reads those too).
double parse_real(const char* text, const RecordField& f) {
  double v = 0;
  const std::string_view s(text);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw StoreError("column " + std::string(f.column) + ": not a number: " + std::string(s), Failure::permanent);
  return v;
}

}  // namespace

PostgresStore::PostgresStore(PostgresEndpoint endpoint, std::string schema, std::string table)
    : endpoint_(std::move(endpoint)),
      schema_(std::move(schema)),
      table_((schema_.empty() ? "" : quote_ident(schema_) + ".") + quote_ident(table)) {
  std::lock_guard lock(mutex_);
  connection_locked().exec("create table", create_sql(schema_, table_, table + "_experiment"));
  select_list_ = column_list();
}

PostgresStore::PostgresStore(ReadOnly, PostgresEndpoint endpoint, std::string schema, std::string table)
    : endpoint_(std::move(endpoint)),
      schema_(std::move(schema)),
      table_((schema_.empty() ? "" : quote_ident(schema_) + ".") + quote_ident(table)),
      read_only_(true) {
  // The catalog only: to_regclass is NULL for a table (or schema) that is not there, where a
  // SELECT on it would fail with the server's wording.
  std::lock_guard lock(mutex_);
  std::set<std::string> present;
  bool found = false;
  connection_locked().query_rows(
      "read schema",
      "SELECT a.attname FROM (SELECT to_regclass($1) AS t) r LEFT JOIN pg_attribute a"
      " ON a.attrelid = r.t AND a.attnum > 0 AND NOT a.attisdropped WHERE r.t IS NOT NULL",
      {{table_, false}}, [&](const std::vector<const char*>& cells) {
        found = true;
        if (!cells.empty() && cells[0]) present.insert(cells[0]);
      });
  if (!found)
    throw StoreError(endpoint_.shown + ": no table " + table_ + ": not a record store (give the store a run wrote)",
                     Failure::permanent);
  std::set<std::string> absent;
  for (const auto& f : kRecordFields) {
    const std::string c(f.column);
    if (present.count(c)) continue;
    // A column every version had is missing: another program's table, not an older store.
    if (!f.added_later)
      throw StoreError(endpoint_.shown + ": table " + table_ + " has no column " + c + ": not a record store",
                       Failure::permanent);
    absent.insert(c);
  }
  select_list_ = column_list(absent);
}

PostgresConnection& PostgresStore::connection_locked() {
  if (!conn_ || !conn_->healthy()) {
    conn_.reset();
    conn_ = std::make_unique<PostgresConnection>(endpoint_);
  }
  return *conn_;
}

void PostgresStore::upsert_rows_locked(std::span<const Record* const> rows) {
  std::string sql = "INSERT INTO " + table_ + " (" + column_list() + ") VALUES ";
  std::vector<PgParam> params;
  params.reserve(rows.size() * kRecordFields.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    sql += i ? ",(" : "(";
    for (std::size_t k = 0; k < kRecordFields.size(); ++k)
      sql += (k ? ",$" : "$") + std::to_string(i * kRecordFields.size() + k + 1);
    sql += ")";
    add_params(*rows[i], params);
  }
  connection_locked().exec("upsert", sql + on_conflict_sql(table_), params);
}

void PostgresStore::upsert(const Record& record) {
  if (read_only_) throw StoreError(endpoint_.shown + ": opened read-only", Failure::permanent);
  const Record* one[] = {&record};
  std::lock_guard lock(mutex_);
  upsert_rows_locked(one);
}

std::vector<UpsertFailure> PostgresStore::upsert_batch(std::span<const Record> records) {
  if (records.empty()) return {};
  if (read_only_) throw StoreError(endpoint_.shown + ": opened read-only", Failure::permanent);
  // One row per key, as if the batch were upserted in order: the last record wins, and a stamp it
  // carries as 0 keeps an earlier one's non-zero value (the replay rule within the batch).
  std::vector<const Record*> rows;
  std::deque<Record> merged;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> seen;
  for (const auto& r : records) {
    const auto [it, fresh] = seen.try_emplace({r.experiment_tokenizer, r.id}, rows.size());
    if (fresh) {
      rows.push_back(&r);
      continue;
    }
    const Record& before = *rows[it->second];
    Record next = r;
    if (next.publish_acked == 0) next.publish_acked = before.publish_acked;
    if (next.input_deleted == 0) next.input_deleted = before.input_deleted;
    rows[it->second] = &merged.emplace_back(std::move(next));
  }
  std::lock_guard lock(mutex_);
  if (rows.size() <= kRowsPerStatement) {
    upsert_rows_locked(rows);
    return {};
  }
  auto& conn = connection_locked();
  conn.exec("upsert", "BEGIN");
  try {
    for (std::size_t at = 0; at < rows.size(); at += kRowsPerStatement)
      upsert_rows_locked(std::span<const Record* const>(rows).subspan(at, std::min(kRowsPerStatement, rows.size() - at)));
    conn.exec("upsert", "COMMIT");
  } catch (...) {
    if (conn_ && conn_->healthy()) {
      try {
        conn_->exec("upsert", "ROLLBACK");
      } catch (const StoreError&) {
        conn_.reset();  // a connection in an unknown transaction state is not reused
      }
    }
    throw;
  }
  return {};
}

std::size_t PostgresStore::update_stamps(std::span<const StampPatch> patches) {
  if (patches.empty()) return 0;
  if (read_only_) throw StoreError(endpoint_.shown + ": opened read-only", Failure::permanent);
  std::string sql = "UPDATE " + table_ +
                    " AS r SET publish_acked=CASE WHEN p.a<>0 THEN p.a ELSE r.publish_acked END,"
                    " input_deleted=CASE WHEN p.d<>0 THEN p.d ELSE r.input_deleted END FROM (VALUES ";
  std::vector<PgParam> params;
  params.reserve(patches.size() * 4);
  for (std::size_t i = 0; i < patches.size(); ++i) {
    const std::size_t n = i * 4;
    sql += (i ? ",($" : "($") + std::to_string(n + 1) + "::text,$" + std::to_string(n + 2) + "::text,$" +
           std::to_string(n + 3) + "::bigint,$" + std::to_string(n + 4) + "::bigint)";
    const auto& p = patches[i];
    params.push_back({p.experiment_tokenizer, false});
    params.push_back({p.id, false});
    params.push_back({std::to_string(p.publish_acked), false});
    params.push_back({std::to_string(p.input_deleted), false});
  }
  sql += ") AS p(k, i, a, d) WHERE r.experiment_tokenizer=p.k AND r.id=p.i";
  std::lock_guard lock(mutex_);
  return connection_locked().exec("update stamps", sql, params);
}

void PostgresStore::scan(const std::string& experiment, const std::function<void(const Record&)>& fn) {
  std::string sql = "SELECT " + select_list_ + " FROM " + table_;
  std::vector<PgParam> params;
  if (!experiment.empty()) {
    sql += " WHERE experiment=$1";
    params.push_back({experiment, false});
  }
  std::lock_guard lock(mutex_);
  Record r;
  connection_locked().query_rows("scan", sql, params, [&](const std::vector<const char*>& cells) {
    if (cells.size() != kRecordFields.size())
      throw StoreError(endpoint_.shown + ": scan: unexpected column count", Failure::permanent);
    for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
      const auto& f = kRecordFields[k];
      // NULL: empty text, an absent optional, 0 for an integer (a column added later, old rows).
      if (!cells[k])
        f.set(r, f.type == FieldType::text ? FieldValue(std::string_view())
                 : f.type == FieldType::optional_integer ? FieldValue()
                                                         : FieldValue(std::int64_t{0}));
      else if (f.type == FieldType::text) f.set(r, std::string_view(cells[k]));
      else if (f.type == FieldType::real) f.set(r, parse_real(cells[k], f));
      else f.set(r, parse_int(cells[k], f));
    }
    fn(r);
  });
}

PostgresTarget postgres_target(const BackendUrl& u) {
  u.check_params({"table", "schema", "timeout_ms"});
  const std::string db = u.path.size() > 1 ? u.path.substr(1) : "";
  if (!u.has_authority || u.host.empty() || db.empty() || db.find('/') != std::string::npos)
    throw std::invalid_argument(u.describe("store", "expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"));
  const std::string table = u.param("table", "records");
  if (table.empty()) throw std::invalid_argument(u.describe("store", "parameter \"table\" is empty"));
  PostgresEndpoint e;
  e.host = u.host;
  e.port = u.port ? u.port : 5432;
  e.user = u.user;
  e.password = u.password;
  e.database = db;
  e.shown = u.redacted();
  e.call_timeout = u.call_timeout();
  return {std::move(e), u.param("schema", ""), table};
}

std::string postgres_quote_ident(const std::string& name) { return quote_ident(name); }

std::unique_ptr<Store> open_postgres_store(const BackendUrl& u) {
  auto t = postgres_target(u);
  return std::make_unique<PostgresStore>(std::move(t.endpoint), std::move(t.schema), std::move(t.table));
}

std::unique_ptr<Store> open_postgres_store_read_only(const BackendUrl& u) {
  auto t = postgres_target(u);
  t.endpoint.read_only = true;
  return std::make_unique<PostgresStore>(PostgresStore::ReadOnly{}, std::move(t.endpoint), std::move(t.schema), std::move(t.table));
}

}  // namespace overhead::backends
