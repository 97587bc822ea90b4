// The key store contract (contract/key_store_contract.hpp) against a real PostgreSQL 15: the
// keys table beside each test's records table (?table=NAME makes NAME_keys), read past the
// adapter by a connection of the test's own.
//
// The server is the CTest fixture `postgres` (scripts/services/postgres.sh); its env file is
// named by OVERHEAD_POSTGRES_ENV and read when a test first needs it.
#include <gtest/gtest.h>

#include <string>

#include "backends/postgres_connection.hpp"
#include "key_store_contract.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

std::string pg_env(const std::string& key) { return test_services::service_env("OVERHEAD_POSTGRES_ENV", key); }

// Every row of the keys table of `url` (its ?table= parameter + "_keys") as text.
std::string keys_table_text(const std::string& url) {
  const std::string table = url.substr(url.find("?table=") + 7) + "_keys";
  PostgresEndpoint e;
  e.host = "127.0.0.1";
  e.port = std::stoi(pg_env("PG_PORT"));
  e.user = pg_env("PG_USER");
  e.password = pg_env("PG_PASSWORD");
  e.database = pg_env("PG_DB");
  e.shown = "test";
  PostgresConnection c(e);
  std::string out;
  c.query_rows("test dump", "SELECT k::text FROM \"" + table + "\" k", {}, [&](const std::vector<const char*>& cells) {
    if (!cells.empty() && cells[0]) out += std::string(cells[0]) + "\n";
  });
  return out;
}

std::string unreachable_url() {
  return "postgres://" + pg_env("PG_USER") + ":" + pg_env("PG_PASSWORD") + "@127.0.0.1:" +
         std::to_string(test_services::closed_port()) + "/" + pg_env("PG_DB") + "?timeout_ms=1000";
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(Postgres, KeyStoreTest,
                         ::testing::Values(KeyStoreBackend{"postgres",
                                                           [](const std::filesystem::path&, const std::string& name) {
                                                             return backends::pg_env("PG_URL") + "?table=" + name;
                                                           },
                                                           &backends::keys_table_text, &backends::unreachable_url}),
                         KeyStoreBackendName{});
}  // namespace overhead::pipe::contract
