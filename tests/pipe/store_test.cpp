// The sqlite: store: idempotent upsert by (experiment_tokenizer, id), batches, stamp patches,
// scans by experiment; and the record codecs that carry records to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <variant>

#include "backends/open.hpp"
#include "pipe/object_store.hpp"
#include "pipe/record_codec.hpp"
#include "pipe/store.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using backends::open_store;
using backends::open_object_store;
namespace {

Record make_record(const std::string& experiment, const std::string& tokenizer, const std::string& id, std::int64_t tokens) {
  Record r;
  r.experiment = experiment;
  r.tokenizer = tokenizer;
  r.experiment_tokenizer = experiment + "#" + tokenizer;
  r.id = id;
  r.model = "gpt-4";
  r.start_time = "2026-01-01T00:00:00.000001Z";
  r.end_time = "2026-01-01T00:00:00.000002Z";
  r.token_count = tokens;
  r.api_input = 12;
  r.case_number = 5;
  r.worker = "w\"0";
  r.seq = 3;
  r.batch = 1;
  r.batch_boundary = true;
  r.received = 10;
  r.render_start = 11;
  r.render_end = 12;
  r.encode_end = 13;
  r.publish_start = 14;
  r.prompt_chars = 5;
  r.prompt_bytes = 15;
  return r;
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("store");
    store_ = open_store("sqlite:" + (dir_ / "records.db").string());
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::vector<Record> scan(const std::string& experiment) {
    std::vector<Record> out;
    store_->scan(experiment, [&](const Record& r) { out.push_back(r); });
    return out;
  }
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, UpsertIsIdempotentByKey) {
  store_->upsert(make_record("e", "phi-4", "1", 10));
  store_->upsert(make_record("e", "phi-4", "1", 11));  // a replay with a new value overwrites
  store_->upsert(make_record("e", "gemma", "1", 12));  // same id, other tokenizer: another row
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tokenizer, "gemma");
  EXPECT_EQ(rows[1].token_count, 11);
}

TEST_F(StoreTest, BatchUpsertRoundTripsEveryField) {
  std::vector<Record> batch;
  for (int i = 0; i < 50; ++i) batch.push_back(make_record("e", "t", "id" + std::to_string(i), i));
  batch[7].api_input.reset();
  store_->upsert_batch(batch);
  store_->upsert_batch(batch);  // twice: still 50
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 50u);
  const Record& r = rows[0];  // "id0"
  const Record& want = batch[0];
  EXPECT_EQ(r.experiment_tokenizer, want.experiment_tokenizer);
  EXPECT_EQ(r.model, want.model);
  EXPECT_EQ(r.start_time, want.start_time);
  EXPECT_EQ(r.worker, want.worker);
  EXPECT_EQ(r.api_input, want.api_input);
  EXPECT_FALSE(r.api_output.has_value());
  EXPECT_EQ(r.batch_boundary, true);
  EXPECT_EQ(r.encode_end, 13);
  EXPECT_EQ(r.prompt_bytes, 15);
  int without_usage = 0;
  for (auto& x : rows) without_usage += !x.api_input.has_value();
  EXPECT_EQ(without_usage, 1);
}

TEST_F(StoreTest, StampPatchesSurviveAReplayOfTheRecord) {
  store_->upsert(make_record("e", "t", "1", 10));
  const StampPatch patches[] = {{"e#t", "1", 100, 200}, {"e#t", "missing", 1, 2}};
  EXPECT_EQ(store_->update_stamps(patches), 1u);
  store_->upsert(make_record("e", "t", "1", 10));  // redelivered record carries no stamps
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].publish_acked, 100);
  EXPECT_EQ(rows[0].input_deleted, 200);
}

TEST_F(StoreTest, ScanFiltersByExperimentAndListsThem) {
  store_->upsert(make_record("a", "t", "1", 1));
  store_->upsert(make_record("b", "t", "1", 1));
  store_->upsert(make_record("b", "t", "2", 1));
  EXPECT_EQ(scan("a").size(), 1u);
  EXPECT_EQ(scan("b").size(), 2u);
  EXPECT_EQ(scan("").size(), 3u);
  EXPECT_EQ(store_->experiments(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(StoreTest, ReopeningKeepsTheRecords) {
  store_->upsert(make_record("e", "t", "1", 1));
  store_ = open_store("sqlite:" + (dir_ / "records.db").string());
  EXPECT_EQ(scan("e").size(), 1u);
}

TEST(StoreOpen, UnknownScheme) {
  EXPECT_THROW(open_store("dynamo:x"), std::invalid_argument);
  EXPECT_THROW(open_store("sqlite:"), std::invalid_argument);
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
