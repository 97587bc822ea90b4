#include "backends/postgres_key_store.hpp"

#include "backends/key_store_rows.hpp"
#include "backends/postgres_store.hpp"
#include "util/number_text.hpp"

namespace overhead::backends {

using ports::ApiKey;
using ports::Failure;
using ports::KeyExistsError;
using ports::KeyUsage;
using ports::StoreError;
using ports::UsageBucket;

namespace {

constexpr const char* kPostgresKeyColumns = "name, secret_hash, rpm, tpm, budget_usd, models, created_unix, expires_unix, revoked_unix";

}  // namespace

PostgresKeyStore::PostgresKeyStore(PostgresEndpoint endpoint, const std::string& schema, const std::string& records_table)
    : session_(std::move(endpoint)),
      keys_(pg_qualified(schema, records_table + "_keys")),
      records_(pg_qualified(schema, records_table)) {
  const std::string tables =
      "CREATE TABLE IF NOT EXISTS " + keys_ +
      " (name TEXT PRIMARY KEY, secret_hash TEXT NOT NULL, rpm BIGINT NOT NULL, tpm BIGINT NOT NULL,"
      " budget_usd DOUBLE PRECISION, models TEXT NOT NULL, created_unix BIGINT NOT NULL,"
      " expires_unix BIGINT NOT NULL, revoked_unix BIGINT NOT NULL);"
      "CREATE INDEX IF NOT EXISTS " + postgres_quote_ident(records_table + "_key_name") + " ON " + records_ + " (key_name);";
  session_.with([&](PostgresConnection& c) {
    return c.exec("create keys table", pg_create_under_lock("overhead key store", schema, tables));
  });
}

void PostgresKeyStore::create(const ApiKey& key) {
  const std::vector<PgParam> params = {
      pg_text(key.name),
      pg_text(key.secret_hash),
      pg_integer(key.rpm),
      pg_integer(key.tpm),
      key.budget_usd ? pg_text(util::shortest_double_text(*key.budget_usd)) : PgParam{{}, true},
      pg_text(key_models_json(key.models)),
      pg_integer(key.created_unix),
      pg_integer(key.expires_unix),
      pg_integer(key.revoked_unix)};
  const std::size_t inserted = session_.with([&](PostgresConnection& c) {
    return c.exec("create key",
                  "INSERT INTO " + keys_ + " (" + kPostgresKeyColumns +
                      ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (name) DO NOTHING",
                  params);
  });
  if (inserted == 0) throw KeyExistsError(session_.shown() + ": a key named \"" + key.name + "\" exists already");
}

std::vector<ApiKey> PostgresKeyStore::list() {
  std::vector<ApiKey> keys;
  session_.with([&](PostgresConnection& c) {
    c.query_rows("list keys", std::string("SELECT ") + kPostgresKeyColumns + " FROM " + keys_ + " ORDER BY name COLLATE \"C\"", {},
                 [&](const std::vector<const char*>& cells) {
                   if (cells.size() != 9) throw StoreError(session_.shown() + ": list keys: unexpected column count", Failure::permanent);
                   ApiKey k;
                   k.name = cells[0] ? cells[0] : "";
                   const std::string where = session_.shown() + ": key \"" + k.name + "\"";
                   k.secret_hash = cells[1] ? cells[1] : "";
                   k.rpm = pg_int_cell(cells[2], where);
                   k.tpm = pg_int_cell(cells[3], where);
                   if (cells[4]) k.budget_usd = real_from_text(cells[4], where);
                   k.models = key_models_from_json(cells[5] ? cells[5] : "", where);
                   k.created_unix = pg_int_cell(cells[6], where);
                   k.expires_unix = pg_int_cell(cells[7], where);
                   k.revoked_unix = pg_int_cell(cells[8], where);
                   keys.push_back(std::move(k));
                 });
  });
  return keys;
}

bool PostgresKeyStore::revoke(const std::string& name, std::int64_t now_unix) {
  return session_.with([&](PostgresConnection& c) {
    return c.exec("revoke key", "UPDATE " + keys_ + " SET revoked_unix = $2 WHERE name = $1 AND revoked_unix = 0",
                  {pg_text(name), pg_integer(now_unix)});
  }) > 0;
}

KeyUsage PostgresKeyStore::usage(const std::string& name, const std::string& experiment) {
  const std::string where = "key_name = $1" + std::string(experiment.empty() ? "" : " AND experiment = $2");
  const std::string sums = ", count(*), COALESCE(SUM(token_count), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_usd), 0) FROM ";
  const std::string sql = "SELECT 'm', COALESCE(model, '')" + sums + records_ + " WHERE " + where +
                          " GROUP BY 2 UNION ALL SELECT 'd', substr(COALESCE(start_time, ''), 1, 10)" + sums + records_ + " WHERE " +
                          where + " GROUP BY 2";
  std::vector<PgParam> params = {pg_text(name)};
  if (!experiment.empty()) params.push_back(pg_text(experiment));
  std::vector<UsageBucket> by_model, by_day;
  const std::string shown = session_.shown() + ": usage of key \"" + name + "\"";
  session_.with([&](PostgresConnection& c) {
    c.query_rows("usage", sql, params, [&](const std::vector<const char*>& cells) {
      if (cells.size() != 6 || !cells[0]) throw StoreError(shown + ": unexpected columns", Failure::permanent);
      UsageBucket b{cells[1] ? cells[1] : "", pg_int_cell(cells[2], shown), pg_int_cell(cells[3], shown), pg_int_cell(cells[4], shown),
                    real_from_text(cells[5] ? cells[5] : "", shown)};
      (std::string_view(cells[0]) == "m" ? by_model : by_day).push_back(std::move(b));
    });
  });
  return key_usage_from_buckets(name, std::move(by_model), std::move(by_day));
}

std::unordered_map<std::string, double> PostgresKeyStore::spend_by_key() {
  std::unordered_map<std::string, double> out;
  session_.with([&](PostgresConnection& c) {
    c.query_rows("spend by key", "SELECT key_name, COALESCE(SUM(cost_usd), 0) FROM " + records_ + " WHERE key_name <> '' GROUP BY key_name",
                 {}, [&](const std::vector<const char*>& cells) {
                   if (cells.size() != 2 || !cells[0])
                     throw StoreError(session_.shown() + ": spend by key: unexpected columns", Failure::permanent);
                   out[cells[0]] = real_from_text(cells[1] ? cells[1] : "", session_.shown() + ": spend of key \"" + cells[0] + "\"");
                 });
  });
  return out;
}

std::unique_ptr<ports::KeyStore> open_postgres_key_store(const ports::BackendUrl& u) {
  auto t = postgres_target(u);
  return std::make_unique<PostgresKeyStore>(std::move(t.endpoint), t.schema, t.table);
}

}  // namespace overhead::backends
