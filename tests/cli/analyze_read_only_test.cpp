// `overhead analyze` is a reader: pointed at a SQLite file that is not a record store (another
// program's database, or no database at all) it fails naming the problem and leaves the file as it
// was, byte for byte, with no WAL or shared-memory file beside it. It used to create the `records`
// table in it and switch it to WAL.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;
namespace fs = std::filesystem;

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void expect_unchanged_after_analyze(const fs::path& db, const std::string& expected_error) {
  const std::string before = bytes_of(db);
  const auto mtime = fs::last_write_time(db);
  const RunResult r = run_overhead("analyze --no-png --store 'sqlite:" + db.string() + "' --out '" + (db.parent_path() / "report").string() + "'");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find(expected_error), std::string::npos) << r.err;
  EXPECT_EQ(bytes_of(db), before) << "analyze changed " << db;
  EXPECT_EQ(fs::last_write_time(db), mtime);
  EXPECT_FALSE(fs::exists(db.string() + "-wal"));
  EXPECT_FALSE(fs::exists(db.string() + "-shm"));
}

TEST(AnalyzeReadOnly, AForeignSqliteFileIsRefusedAndLeftAsItWas) {
  const auto dir = temp_dir("analyze_foreign");
  const fs::path db = dir / "other.db";
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(h, "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES('keep me');", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(h);
  expect_unchanged_after_analyze(db, "no table 'records'");
  // Still a rollback-journal database holding only its own table.
  ASSERT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(h, "SELECT count(*) FROM sqlite_master", -1, &s, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(s), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(s, 0), 1);
  sqlite3_finalize(s);
  sqlite3_close(h);
}

TEST(AnalyzeReadOnly, ACorruptFileIsRefusedAndLeftAsItWas) {
  const auto dir = temp_dir("analyze_corrupt");
  const fs::path db = dir / "corrupt.db";
  write_file(db, std::string(8192, '\x5a'));
  expect_unchanged_after_analyze(db, "not a database");
  const fs::path empty = dir / "empty.db";
  write_file(empty, "");
  expect_unchanged_after_analyze(empty, "no table 'records'");
}

}  // namespace
