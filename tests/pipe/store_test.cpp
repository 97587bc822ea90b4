// The store contract (contract/store_contract.hpp) over sqlite:, opening errors, the record
// codecs that carry records to a store, and the file: object store.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <variant>

#include "backends/open.hpp"
#include "backends/sqlite_db.hpp"
#include "ports/object_store.hpp"
#include "ports/record_codec.hpp"
#include "ports/store.hpp"
#include "store_contract.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using ports::append_record_json;
using ports::append_stamps_json;
using ports::ObjectStore;
using ports::parse_log_message;
using ports::Record;
using ports::scan_in_key_order;
using ports::StampPatch;
using ports::write_records_csv;
using backends::open_store;
using backends::open_object_store;
namespace {

using contract::make_record;
using contract::StoreBackend;
using contract::StoreTest;

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(StoreBackend{"sqlite", [](const std::filesystem::path& dir, const std::string& name) {
                           return open_store("sqlite:" + (dir / (name + ".db")).string());
                         }}),
                         contract::StoreBackendName{});

TEST(StoreOpen, UnknownScheme) {
  EXPECT_THROW(open_store("dynamo:x"), std::invalid_argument);
  EXPECT_THROW(open_store("sqlite:"), std::invalid_argument);
}

// A store or queue file is made only in a folder that exists, and a reader (analyze, status)
// never makes one: a mistyped path is an error naming it, and nothing is left behind.
TEST(StoreOpen, FilesAreMadeOnlyInExistingFoldersAndNeverByReaders) {
  const auto dir = testing::temp_dir("store-folders");
  const auto error_of = [](auto&& open) {
    try {
      open();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string deep = (dir / "no" / "such" / "s.db").string();
  EXPECT_NE(error_of([&] { (void)open_store("sqlite:" + deep); }).find((dir / "no" / "such").string() + " does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)backends::open_queue("sqlite-queue:" + deep); }).find("does not exist"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "no"));
  const std::string missing = (dir / "missing.db").string();
  EXPECT_NE(error_of([&] { (void)open_store("sqlite:" + missing, backends::Access::existing); }).find("no such file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)backends::open_queue("sqlite-queue:" + missing, {}, backends::Access::existing); })
                .find("no such file"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(missing));
  // A file that is there opens either way.
  (void)open_store("sqlite:" + missing);
  EXPECT_NO_THROW((void)open_store("sqlite:" + missing, backends::Access::existing));
  std::filesystem::remove_all(dir);
}

// A records table as an older version wrote it: the first 24 fields, plus `more_columns` (SQL
// column definitions, each ending in a comma), with one row ('e#t', 'old') whose values for the
// extra columns are `more_values` (", v1, v2").
void write_older_table(const std::string& path, const std::string& more_columns, const std::string& more_values) {
  backends::SqliteDb db(path, "old");
  db.exec(
      "CREATE TABLE records (experiment_tokenizer TEXT NOT NULL, id TEXT NOT NULL, model TEXT, start_time TEXT,"
      " end_time TEXT, token_count INTEGER, api_input INTEGER, api_output INTEGER, experiment TEXT NOT NULL,"
      " tokenizer TEXT, case_number INTEGER, worker TEXT, seq INTEGER, batch INTEGER, batch_boundary INTEGER,"
      " received INTEGER, render_start INTEGER, render_end INTEGER, encode_end INTEGER, publish_start INTEGER,"
      " publish_acked INTEGER, input_deleted INTEGER, prompt_chars INTEGER, prompt_bytes INTEGER," +
          more_columns +
          " PRIMARY KEY (experiment_tokenizer, id)) WITHOUT ROWID;"
          "INSERT INTO records VALUES ('e#t', 'old', 'm', '', '', 7, NULL, NULL, 'e', 't', 2, 'w', 0, 0, 1,"
          " 1, 2, 3, 4, 5, 6, 0, 3, 3" +
          more_values + ");");
}

// The records table as it was before run_id (the first 24 fields): a store written by an older
// version. Opening it adds the column; old rows read with an empty run id, new ones keep theirs.
TEST(SqliteStore, AnOlderTableWithoutRunIdGetsTheColumn) {
  const auto dir = testing::temp_dir("store-migrate");
  const std::string path = (dir / "old.db").string();
  write_older_table(path, "", "");
  for (int open = 0; open < 2; ++open) {  // the second open finds the column and adds nothing
    auto store = open_store("sqlite:" + path);
    Record fresh = make_record("e", "t", "new" + std::to_string(open), 9);
    fresh.run_id = "run-" + std::to_string(open);
    store->upsert(fresh);
    const auto rows = scan_in_key_order(*store, "e");
    ASSERT_EQ(rows.size(), 2u + open);
    EXPECT_EQ(rows[0].id, "new0");
    EXPECT_EQ(rows[0].run_id, "run-0");
    EXPECT_EQ(rows.back().id, "old");
    EXPECT_EQ(rows.back().run_id, "");
    EXPECT_EQ(rows.back().token_count, 7);
    EXPECT_EQ(rows.back().publish_acked, 6);
  }
  std::filesystem::remove_all(dir);
}

// The records table as it was before the decoder stage (25 fields, run_id the last): opening it
// adds decode_start, first_token, decode_end and output_tokens; old rows read them as 0, new
// rows keep the values written.
TEST(SqliteStore, AnOlderTableWithoutDecoderStampsGetsTheColumns) {
  const auto dir = testing::temp_dir("store-migrate-d");
  const std::string path = (dir / "old.db").string();
  write_older_table(path, " run_id TEXT,", ", 'run-old'");
  for (int open = 0; open < 2; ++open) {  // the second open finds the columns and adds nothing
    auto store = open_store("sqlite:" + path);
    Record fresh = make_record("e", "t", "new" + std::to_string(open), 9);
    fresh.decode_start = 100 + open;
    fresh.first_token = 200 + open;
    fresh.decode_end = 300 + open;
    fresh.output_tokens = 50 + open;
    store->upsert(fresh);
    const auto rows = scan_in_key_order(*store, "e");
    ASSERT_EQ(rows.size(), 2u + open);
    EXPECT_EQ(rows[0].id, "new0");
    EXPECT_EQ(rows[0].decode_start, 100);
    EXPECT_EQ(rows[0].first_token, 200);
    EXPECT_EQ(rows[0].decode_end, 300);
    EXPECT_EQ(rows[0].output_tokens, 50);
    const Record& old = rows.back();
    EXPECT_EQ(old.id, "old");
    EXPECT_EQ(old.run_id, "run-old");
    EXPECT_EQ(old.token_count, 7);
    EXPECT_EQ(old.decode_start, 0);
    EXPECT_EQ(old.first_token, 0);
    EXPECT_EQ(old.decode_end, 0);
    EXPECT_EQ(old.output_tokens, 0);
  }
  std::filesystem::remove_all(dir);
}

TEST(RecordCodec, JsonRoundTripAndStampPatches) {
  Record r = make_record("e", "t", "a\"b\n", 42);
  std::string body;
  append_record_json(body, r);
  auto back = parse_log_message(body, "test");
  ASSERT_TRUE(std::holds_alternative<Record>(back));
  const Record& x = std::get<Record>(back);
  EXPECT_EQ(x.id, r.id);
  EXPECT_EQ(x.worker, r.worker);
  EXPECT_EQ(x.token_count, 42);
  EXPECT_EQ(x.api_input, r.api_input);
  EXPECT_FALSE(x.api_output.has_value());
  EXPECT_TRUE(x.batch_boundary);

  const StampPatch p[] = {{"e#t", "1", 5, 6}};
  std::string pbody;
  append_stamps_json(pbody, p);
  auto pm = parse_log_message(pbody, "test");
  ASSERT_TRUE(std::holds_alternative<std::vector<StampPatch>>(pm));
  EXPECT_EQ(std::get<std::vector<StampPatch>>(pm)[0].input_deleted, 6);

  EXPECT_THROW(parse_log_message("{\"id\":1}", "msg 9"), std::runtime_error);
  EXPECT_THROW(parse_log_message("nope", "msg 9"), std::runtime_error);
}

TEST(RecordCodec, CsvQuotesAndHasAHeader) {
  std::vector<Record> rs{make_record("e", "t", "x,y", 1)};
  std::ostringstream out;
  write_records_csv(out, rs);
  const std::string csv = out.str();
  EXPECT_EQ(csv.rfind("experiment_tokenizer,id,model,", 0), 0u);
  EXPECT_NE(csv.find("\"x,y\""), std::string::npos);
  EXPECT_NE(csv.find("\"w\"\"0\""), std::string::npos);
}

TEST(ObjectStore, FilePutGet) {
  const auto dir = testing::temp_dir("objects");
  auto os = open_object_store("file:" + dir.string());
  os->put("a/b.csv", "hello");
  EXPECT_EQ(os->get("a/b.csv"), "hello");
  EXPECT_THROW(os->put("../x", "no"), std::invalid_argument);
  EXPECT_THROW(os->get("missing"), std::runtime_error);
  EXPECT_THROW(open_object_store("s4:x"), std::invalid_argument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
