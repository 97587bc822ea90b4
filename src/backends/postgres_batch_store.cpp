#include "backends/postgres_batch_store.hpp"

#include "backends/postgres_side_table.hpp"
#include "backends/postgres_store.hpp"

namespace overhead::backends {
namespace {

using ports::BatchDocument;
using ports::BatchKind;
using ports::Failure;
using ports::StoreError;

constexpr std::string_view kFilesSuffix = "_batch_files";
constexpr std::string_view kBatchesSuffix = "_batches";
constexpr std::string_view kNewestIndexSuffix = "_newest";  // the longest name: <table>_batch_files_newest
constexpr const char* kColumns = "id, created_at, open, body";

class PostgresBatchStore final : public ports::BatchStore {
 public:
  PostgresBatchStore(PostgresEndpoint endpoint, const std::string& schema, const std::string& records_table)
      : session_(std::move(endpoint)),
        files_(pg_qualified(schema, records_table + std::string(kFilesSuffix))),
        batches_(pg_qualified(schema, records_table + std::string(kBatchesSuffix))) {
    std::string tables;
    for (const auto suffix : {kFilesSuffix, kBatchesSuffix}) {
      const std::string name = records_table + std::string(suffix);
      const std::string table = pg_qualified(schema, name);
      tables += "CREATE TABLE IF NOT EXISTS " + table +
                " (id TEXT COLLATE \"C\" PRIMARY KEY, created_at BIGINT NOT NULL, open BOOLEAN NOT NULL, body TEXT NOT NULL);"
                "CREATE INDEX IF NOT EXISTS " + postgres_quote_ident(name + std::string(kNewestIndexSuffix)) + " ON " + table +
                " (created_at, id);";
    }
    tables += "CREATE INDEX IF NOT EXISTS " + postgres_quote_ident(records_table + std::string(kBatchesSuffix) + "_open") + " ON " +
              batches_ + " (id) WHERE open;";
    session_.with([&](PostgresConnection& c) {
      return c.exec("create batch tables", pg_create_under_lock("overhead batch store", schema, tables));
    });
  }

  void put(BatchKind kind, const BatchDocument& doc) override {
    const std::string sql = "INSERT INTO " + table_of(kind) + " (" + kColumns +
                            ") VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at,"
                            " open = EXCLUDED.open, body = EXCLUDED.body";
    session_.with([&](PostgresConnection& c) {
      return c.exec("put batch document", sql,
                    {pg_text(doc.id), pg_integer(doc.created_at), pg_text(doc.open ? "true" : "false"), pg_text(doc.body)});
    });
  }

  std::optional<BatchDocument> get(BatchKind kind, const std::string& id) override {
    auto docs = select("get batch document", "SELECT " + std::string(kColumns) + " FROM " + table_of(kind) + " WHERE id = $1",
                       {pg_text(id)});
    if (docs.empty()) return std::nullopt;
    return std::move(docs.front());
  }

  bool remove(BatchKind kind, const std::string& id) override {
    return session_.with([&](PostgresConnection& c) {
             return c.exec("remove batch document", "DELETE FROM " + table_of(kind) + " WHERE id = $1", {pg_text(id)});
           }) > 0;
  }

  std::vector<BatchDocument> list(BatchKind kind, const std::string& after, std::size_t limit) override {
    const std::string t = table_of(kind);
    // An `after` that names no row: NOT EXISTS holds and the list starts at the newest.
    const std::string sql = "SELECT " + std::string(kColumns) + " FROM " + t + " WHERE NOT EXISTS (SELECT 1 FROM " + t +
                            " WHERE id = $1) OR (created_at, id) < (SELECT created_at, id FROM " + t +
                            " WHERE id = $1) ORDER BY created_at DESC, id DESC LIMIT $2";
    return select("list batch documents", sql, {pg_text(after), pg_integer(static_cast<std::int64_t>(limit))});
  }

  std::vector<BatchDocument> open_batches() override {
    return select("list open batches", "SELECT " + std::string(kColumns) + " FROM " + batches_ + " WHERE open", {});
  }

  const std::string& url() const override { return session_.shown(); }

 private:
  const std::string& table_of(BatchKind kind) const { return kind == BatchKind::file ? files_ : batches_; }

  std::vector<BatchDocument> select(const std::string& what, const std::string& sql, const std::vector<PgParam>& params) {
    std::vector<BatchDocument> out;
    session_.with([&](PostgresConnection& c) {
      c.query_rows(what, sql, params, [&](const std::vector<const char*>& cells) {
        if (cells.size() != 4 || !cells[0] || !cells[2] || !cells[3])
          throw StoreError(session_.shown() + ": " + what + ": unexpected columns", Failure::permanent);
        const std::string where = session_.shown() + ": batch document \"" + cells[0] + "\"";
        out.push_back(BatchDocument{cells[0], pg_int_cell(cells[1], where), std::string_view(cells[2]) == "t", cells[3]});
      });
    });
    return out;
  }

  PostgresSession session_;
  const std::string files_;    // quoted, schema-qualified: <table>_batch_files
  const std::string batches_;  // quoted, schema-qualified: <table>_batches
};

}  // namespace

std::unique_ptr<ports::BatchStore> open_postgres_batch_store(const ports::BackendUrl& u) {
  auto t = postgres_target(u);
  check_pg_side_names(u, t.table, std::string(kFilesSuffix) + std::string(kNewestIndexSuffix));
  return std::make_unique<PostgresBatchStore>(std::move(t.endpoint), t.schema, t.table);
}

}  // namespace overhead::backends
