// The batch store contract (contract/batch_store_contract.hpp) against a real PostgreSQL 15: the
// tables <table>_batch_files and <table>_batches beside a records table named after each test's
// folder (?table=NAME), so a store opened again on the same folder finds its documents; and the
// table= parameter too long for the names beside it.
//
// The server is the CTest fixture `postgres` (scripts/services/postgres.sh); its env file is
// named by OVERHEAD_POSTGRES_ENV and read when a test first needs it.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "backends/open.hpp"
#include "batch_store_contract.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

std::string pg_env(const std::string& key) { return test_services::service_env("OVERHEAD_POSTGRES_ENV", key); }

// A table name from the test's folder: the same folder, the same tables.
std::string table_of(const std::filesystem::path& dir) {
  std::string name = "b_" + dir.filename().string();
  for (char& c : name)
    if (c == '-') c = '_';
  return name;
}

std::unique_ptr<ports::BatchStore> unreachable() {
  return open_batch_store("postgres://" + pg_env("PG_USER") + ":" + pg_env("PG_PASSWORD") + "@127.0.0.1:" +
                          std::to_string(test_services::closed_port()) + "/" + pg_env("PG_DB") + "?timeout_ms=1000");
}

TEST(PostgresBatchStore, ATableNameTooLongForTheTablesBesideItIsRefused) {
  const std::string table(50, 't');
  try {
    (void)open_batch_store(pg_env("PG_URL") + "?table=" + table);
    FAIL() << "a 50-byte table name was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("table"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(pg_env("PG_PASSWORD")), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(Postgres, BatchStoreSemantics,
                         ::testing::Values(BatchStoreBackend{"postgres",
                                                             [](const std::filesystem::path& dir) {
                                                               return backends::open_batch_store(backends::pg_env("PG_URL") +
                                                                                                 "?table=" + backends::table_of(dir));
                                                             },
                                                             &backends::unreachable}),
                         BatchStoreBackendName{});
}  // namespace overhead::pipe::contract
