// The store contract (contract/store_contract.hpp) against a real PostgreSQL 15, and what is
// particular to the PostgreSQL adapter: merging repeated keys in one batch, the schema parameter,
// the URL it shows, and one clear error, never showing the password, for a wrong password, an
// unreachable port and a missing database.
//
// The server is the CTest fixture `postgres` (scripts/services/postgres.sh); its env file is
// named by OVERHEAD_POSTGRES_ENV and read when a test first needs it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

#include "backends/open.hpp"
#include "backends/postgres_connection.hpp"
#include "ports/errors.hpp"
#include "store_contract.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

std::string pg_env(const std::string& key) { return test_services::service_env("OVERHEAD_POSTGRES_ENV", key); }

using test_services::unique_name;

using test_services::closed_port;

// A connection of the test's own, to set a table up or read the catalog beside the store.
PostgresConnection direct_connection() {
  PostgresEndpoint e;
  e.host = "127.0.0.1";
  e.port = std::stoi(pg_env("PG_PORT"));
  e.user = pg_env("PG_USER");
  e.password = pg_env("PG_PASSWORD");
  e.database = pg_env("PG_DB");
  e.shown = "test";
  return PostgresConnection(e);
}

// The first cell of a one-value query on a connection of the test's own ("" for NULL or no row).
std::string query_value(const std::string& sql, const std::vector<PgParam>& params = {}) {
  PostgresConnection c = direct_connection();
  std::string out;
  c.query_rows("test query", sql, params, [&](const std::vector<const char*>& cells) {
    if (!cells.empty() && cells[0]) out = cells[0];
  });
  return out;
}

// The table as a version before run_id and the decoder's columns made it (the first 24 fields),
// with one row.
void create_older_table(const std::string& table) {
  PostgresConnection c = direct_connection();
  c.exec("old table",
         "CREATE TABLE " + table +
             " (experiment_tokenizer TEXT NOT NULL, id TEXT NOT NULL, model TEXT, start_time TEXT, end_time TEXT,"
             " token_count BIGINT, api_input BIGINT, api_output BIGINT, experiment TEXT NOT NULL, tokenizer TEXT,"
             " case_number BIGINT, worker TEXT, seq BIGINT, batch BIGINT, batch_boundary BIGINT, received BIGINT,"
             " render_start BIGINT, render_end BIGINT, encode_end BIGINT, publish_start BIGINT, publish_acked BIGINT,"
             " input_deleted BIGINT, prompt_chars BIGINT, prompt_bytes BIGINT, PRIMARY KEY (experiment_tokenizer, id));"
             "INSERT INTO " + table +
             " VALUES ('e#t', 'old', 'm', '', '', 7, NULL, NULL, 'e', 't', 2, 'w', 0, 0, 1, 1, 2, 3, 4, 5, 6, 0, 3, 3);");
}

// What the catalog says of `table`: its columns and its indexes, to compare before and after.
std::string table_shape(const std::string& table) {
  return query_value("SELECT count(*) FROM information_schema.columns WHERE table_name = $1", {{table, false}}) + " columns, " +
         query_value("SELECT count(*) FROM pg_indexes WHERE tablename = $1", {{table, false}}) + " indexes";
}

std::string url_with(const std::string& password, int port, const std::string& db) {
  return "postgres://" + pg_env("PG_USER") + ":" + password + "@127.0.0.1:" + std::to_string(port) + "/" + db;
}

// The message of the StoreError that opening `url` throws, checked to be one line without the
// password, with the given failure kind.
std::string open_error(const std::string& url, const std::string& password, ports::Failure want) {
  try {
    (void)open_store(url);
  } catch (const ports::StoreError& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.failure(), want) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find(password), std::string::npos) << m;
    EXPECT_EQ(m.find(pg_env("PG_PASSWORD")), std::string::npos) << m;
    EXPECT_NE(m.find("***"), std::string::npos) << m;
    return m;
  }
  ADD_FAILURE() << "opening did not throw StoreError";
  return {};
}

TEST(PostgresStore, AWrongPasswordIsOnePermanentErrorWithoutThePassword) {
  const std::string m = open_error(url_with("not-the-secret-4711", std::stoi(pg_env("PG_PORT")), pg_env("PG_DB")),
                                   "not-the-secret-4711", ports::Failure::permanent);
  EXPECT_NE(m.find("password authentication failed"), std::string::npos) << m;
}

TEST(PostgresStore, AnUnreachablePortIsOneTransientErrorWithoutThePassword) {
  const std::string m =
      open_error(url_with(pg_env("PG_PASSWORD"), closed_port(), pg_env("PG_DB")), pg_env("PG_PASSWORD"), ports::Failure::transient);
  EXPECT_NE(m.find("cannot connect"), std::string::npos) << m;
}

TEST(PostgresStore, AMissingDatabaseIsOnePermanentErrorWithoutThePassword) {
  const std::string m = open_error(url_with(pg_env("PG_PASSWORD"), std::stoi(pg_env("PG_PORT")), "no_such_db"),
                                   pg_env("PG_PASSWORD"), ports::Failure::permanent);
  EXPECT_NE(m.find("no_such_db"), std::string::npos) << m;
}

// What a user sees: `overhead analyze --store URL` prints one line and exits 1 for each bad
// server URL, and the line never holds the password.
TEST(PostgresStore, TheCliPrintsOneLineAndExitsOneForEachBadServerUrl) {
  const int port = std::stoi(pg_env("PG_PORT"));
  const std::string urls[] = {url_with("not-the-secret-4711", port, pg_env("PG_DB")),
                              url_with(pg_env("PG_PASSWORD"), closed_port(), pg_env("PG_DB")),
                              url_with(pg_env("PG_PASSWORD"), port, "no_such_db")};
  for (const auto& url : urls) {
    const std::string cmd = std::string(OVERHEAD_BINARY) + " analyze --no-png --store '" + url + "' --out /dev/null 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
    const int status = pclose(p);
    ASSERT_TRUE(WIFEXITED(status)) << out;
    EXPECT_EQ(WEXITSTATUS(status), 1) << out;
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // exactly one line
    EXPECT_EQ(out.find("not-the-secret-4711"), std::string::npos) << out;
    EXPECT_EQ(out.find(pg_env("PG_PASSWORD")), std::string::npos) << out;
  }
}

// A server that goes away and comes back: calls fail as transient while it is down (so the
// consumer retries), and the next call after it returns reconnects without reopening the store.
// Uses a private server (its own folder), so the shared fixture stays up for the other tests.
TEST(PostgresStore, AServerRestartIsTransientAndTheStoreReconnects) {
  const std::string dir = ::testing::TempDir() + "pg-restart-" + std::to_string(getpid());
  const std::string script = std::string(OVERHEAD_SOURCE_DIR) + "/scripts/services/postgres.sh";
  struct Cleanup {  // the server stops even when an assertion ends the test early
    std::string command;
    ~Cleanup() { (void)std::system(command.c_str()); }
  } cleanup{script + " clean " + dir + " >/dev/null"};
  ASSERT_EQ(std::system((script + " start " + dir + " >/dev/null").c_str()), 0);
  std::string url;
  {
    std::ifstream in(dir + "/postgres.env");
    std::string line;
    while (std::getline(in, line))
      if (line.starts_with("PG_URL=")) url = line.substr(7);
  }
  ASSERT_FALSE(url.empty());
  const auto store = open_store(url + "?timeout_ms=3000");
  store->upsert(pipe::contract::make_record("e", "t", "1", 1));
  ASSERT_EQ(std::system((script + " stop " + dir + " >/dev/null").c_str()), 0);
  try {
    store->upsert(pipe::contract::make_record("e", "t", "2", 2));
    ADD_FAILURE() << "an upsert with the server down succeeded";
  } catch (const ports::StoreError& e) {
    EXPECT_EQ(e.failure(), ports::Failure::transient) << e.what();
  }
  ASSERT_EQ(std::system((script + " start " + dir + " >/dev/null").c_str()), 0);  // same data, same port
  store->upsert(pipe::contract::make_record("e", "t", "2", 2));
  EXPECT_EQ(ports::scan_in_key_order(*store, "e").size(), 2u);
}

TEST(PostgresStore, BadUrlsAndUnknownParametersAreRejected) {
  EXPECT_THROW((void)open_store("postgres://u@127.0.0.1:5432"), std::invalid_argument);  // no database
  EXPECT_THROW((void)open_store(pg_env("PG_URL") + "?tabel=x"), std::invalid_argument);
}

TEST(PostgresStore, UrlShowsNoPassword) {
  const auto store = open_store(pg_env("PG_URL") + "?table=" + unique_name("shown_"));
  EXPECT_EQ(store->url().find(pg_env("PG_PASSWORD")), std::string::npos);
  EXPECT_NE(store->url().find("***"), std::string::npos);
}

TEST(PostgresStore, RepeatedKeysInOneBatchMergeAsIfUpsertedInOrder) {
  const auto store = open_store(pg_env("PG_URL") + "?table=" + unique_name("dups_"));
  auto first = pipe::contract::make_record("e", "t", "1", 10);
  first.publish_acked = 100;
  auto second = pipe::contract::make_record("e", "t", "1", 11);  // a replay: no stamps, a new count
  const ports::Record batch[] = {first, pipe::contract::make_record("e", "t", "2", 5), second};
  EXPECT_TRUE(store->upsert_batch(batch).empty());
  const auto rows = ports::scan_in_key_order(*store, "e");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].token_count, 11);
  EXPECT_EQ(rows[0].publish_acked, 100);
}

TEST(PostgresStore, ABatchLargerThanOneStatementIsStoredWhole) {
  const auto store = open_store(pg_env("PG_URL") + "?table=" + unique_name("big_"));
  std::vector<ports::Record> batch;
  for (int i = 0; i < 4500; ++i) batch.push_back(pipe::contract::make_record("e", "t", std::to_string(i), i));
  EXPECT_TRUE(store->upsert_batch(batch).empty());
  EXPECT_EQ(ports::scan_in_key_order(*store, "e").size(), 4500u);
}

TEST(PostgresStore, SchemaParameterCreatesTheSchemaAndKeepsTablesApart) {
  const std::string table = unique_name("t_");
  const auto a = open_store(pg_env("PG_URL") + "?table=" + table + "&schema=" + unique_name("s_"));
  const auto b = open_store(pg_env("PG_URL") + "?table=" + table);
  a->upsert(pipe::contract::make_record("e", "t", "1", 1));
  EXPECT_EQ(ports::scan_in_key_order(*a, "e").size(), 1u);
  EXPECT_TRUE(ports::scan_in_key_order(*b, "e").empty());
}

// A table created before run_id existed (the first 24 fields) gets the column when a store opens
// it: old rows read with an empty run id, new ones keep theirs, and a second open changes nothing.
TEST(PostgresStore, AnOlderTableWithoutRunIdGetsTheColumn) {
  const std::string table = unique_name("old_");
  create_older_table(table);
  for (int open = 0; open < 2; ++open) {
    const auto store = open_store(pg_env("PG_URL") + "?table=" + table);
    auto fresh = pipe::contract::make_record("e", "t", "new" + std::to_string(open), 9);
    fresh.run_id = "run-" + std::to_string(open);
    store->upsert(fresh);
    const auto rows = ports::scan_in_key_order(*store, "e");
    ASSERT_EQ(rows.size(), 2u + open);
    EXPECT_EQ(rows[0].run_id, "run-0");
    EXPECT_EQ(rows.back().id, "old");
    EXPECT_EQ(rows.back().run_id, "");
    EXPECT_EQ(rows.back().publish_acked, 6);
    // The decoder's integer columns, added later too: NULL in the old row reads as 0.
    EXPECT_EQ(rows.back().decode_end, 0);
    EXPECT_EQ(rows.back().output_tokens, 0);
    EXPECT_EQ(rows[0].output_tokens, 50);
  }
}

// `analyze` opens the store read-only: a table that is not there is an error naming it, and is not
// created (it used to be, with its index); an older table is read as it is, with the columns it
// lacks empty, and gets no column and no index (it used to get both); a write through the reader
// is refused.
TEST(PostgresStore, AReaderCreatesNoTable) {
  const std::string table = unique_name("absent_");
  try {
    (void)open_store(pg_env("PG_URL") + "?table=" + table, Access::read_only);
    ADD_FAILURE() << "a reader opened a table that is not there";
  } catch (const ports::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("no table \"" + table + "\""), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(pg_env("PG_PASSWORD")), std::string::npos) << e.what();
  }
  EXPECT_EQ(query_value("SELECT to_regclass($1)", {{table, false}}), "");
  // Nor a schema named in the URL.
  const std::string schema = unique_name("absent_schema_");
  EXPECT_THROW((void)open_store(pg_env("PG_URL") + "?table=t&schema=" + schema, Access::read_only), ports::StoreError);
  EXPECT_EQ(query_value("SELECT count(*) FROM pg_namespace WHERE nspname = $1", {{schema, false}}), "0");
}

TEST(PostgresStore, AReaderOfAnOlderTableAltersNothing) {
  const std::string table = unique_name("old_read_");
  create_older_table(table);
  const std::string before = table_shape(table);
  const auto store = open_store(pg_env("PG_URL") + "?table=" + table, Access::read_only);
  const auto rows = ports::scan_in_key_order(*store, "e");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].id, "old");
  EXPECT_EQ(rows[0].run_id, "");
  EXPECT_EQ(rows[0].publish_acked, 6);
  EXPECT_EQ(rows[0].output_tokens, 0);
  EXPECT_THROW(store->upsert(pipe::contract::make_record("e", "t", "new", 1)), ports::StoreError);
  EXPECT_EQ(table_shape(table), before);
  EXPECT_EQ(query_value("SELECT count(*) FROM " + table), "1");
}

TEST(PostgresStore, AReaderRefusesATableOfAnotherProgram) {
  const std::string table = unique_name("foreign_");
  direct_connection().exec("foreign table", "CREATE TABLE " + table + " (note TEXT); INSERT INTO " + table + " VALUES ('keep me');");
  const std::string before = table_shape(table);
  try {
    (void)open_store(pg_env("PG_URL") + "?table=" + table, Access::read_only);
    ADD_FAILURE() << "a reader took a foreign table for a record store";
  } catch (const ports::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("not a record store"), std::string::npos) << e.what();
  }
  EXPECT_EQ(table_shape(table), before);
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(Postgres, StoreTest,
                         ::testing::Values(url_store_backend("postgres",
                                                             [](const std::string& name) {
                                                               return backends::pg_env("PG_URL") + "?table=" + name;
                                                             })),
                         StoreBackendName{});
}  // namespace overhead::pipe::contract
