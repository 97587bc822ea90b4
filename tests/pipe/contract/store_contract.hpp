// The store contract: what every Store backend keeps (ports/store.hpp), as one parametrised
// GoogleTest suite, StoreTest. A backend's test binary includes this header once and
// instantiates the suite with its StoreBackend:
//
//   #include "store_contract.hpp"
//   INSTANTIATE_TEST_SUITE_P(Postgres, StoreTest,
//       ::testing::Values(overhead::pipe::contract::url_store_backend(
//           "postgres", [](const std::string& name) { return base + "?table=" + name; })),
//       overhead::pipe::contract::StoreBackendName{});
//
// (link the CMake target overhead_contract_tests). `open(name)` must give the same data for the
// same name (the reopen test) and an empty store for a new one.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "ports/record_fields.hpp"
#include "ports/store.hpp"
#include "test_util.hpp"

namespace overhead::pipe::contract {

struct StoreBackend {
  std::string name;  // shown in the test names
  // The store called `name` (a fresh name = an empty store); `dir` is a temporary folder for
  // backends that keep files.
  std::function<std::unique_ptr<ports::Store>(const std::filesystem::path& dir, const std::string& name)> open;
};

// A backend opened by URL through backends::open_store; `url(name)` builds the URL.
inline StoreBackend url_store_backend(std::string label, std::function<std::string(const std::string& name)> url) {
  return StoreBackend{std::move(label), [url](const std::filesystem::path&, const std::string& name) {
                        return backends::open_store(url(name));
                      }};
}

struct StoreBackendName {
  std::string operator()(const ::testing::TestParamInfo<StoreBackend>& info) const { return info.param.name; }
};

inline ports::Record make_record(const std::string& experiment, const std::string& tokenizer, const std::string& id, std::int64_t tokens) {
  ports::Record r;
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
  r.run_id = "20260101T000000Z-0a1b2c3d";
  r.decode_start = 16;
  r.first_token = 17;
  r.decode_end = 18;
  r.output_tokens = 50;
  return r;
}

class StoreTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir("store");
    name_ = "records_" + std::to_string(std::random_device{}());
    store_ = reopen();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::unique_ptr<ports::Store> reopen() { return GetParam().open(dir_, name_); }
  std::vector<ports::Record> scan(const std::string& experiment) {
    return ports::scan_in_key_order(*store_, experiment);  // a store's scan has no order
  }
  std::filesystem::path dir_;
  std::string name_;
  std::unique_ptr<ports::Store> store_;
};

TEST_P(StoreTest, UpsertIsIdempotentByKey) {
  store_->upsert(make_record("e", "phi-4", "1", 10));
  store_->upsert(make_record("e", "phi-4", "1", 11));  // a replay with a new value overwrites
  store_->upsert(make_record("e", "gemma", "1", 12));  // same id, other tokenizer: another row
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].tokenizer, "gemma");
  EXPECT_EQ(rows[1].token_count, 11);
}

TEST_P(StoreTest, BatchUpsertRoundTripsEveryField) {
  std::vector<ports::Record> batch;
  for (int i = 0; i < 50; ++i) batch.push_back(make_record("e", "t", "id" + std::to_string(i), i));
  batch[7].api_input.reset();
  EXPECT_TRUE(store_->upsert_batch(batch).empty());
  EXPECT_TRUE(store_->upsert_batch(batch).empty());  // twice: still 50
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 50u);
  const ports::Record& r = rows[0];  // "id0"
  const ports::Record& want = batch[0];
  EXPECT_EQ(r.experiment_tokenizer, want.experiment_tokenizer);
  EXPECT_EQ(r.model, want.model);
  EXPECT_EQ(r.start_time, want.start_time);
  EXPECT_EQ(r.worker, want.worker);
  EXPECT_EQ(r.api_input, want.api_input);
  EXPECT_FALSE(r.api_output.has_value());
  EXPECT_EQ(r.batch_boundary, true);
  EXPECT_EQ(r.encode_end, 13);
  EXPECT_EQ(r.prompt_bytes, 15);
  EXPECT_EQ(r.run_id, want.run_id);
  EXPECT_EQ(r.first_token, 17);
  EXPECT_EQ(r.output_tokens, 50);
  for (const auto& f : ports::kRecordFields) EXPECT_EQ(f.get(r), f.get(want)) << "field " << f.name << " not stored as written";
  int without_usage = 0;
  for (auto& x : rows) without_usage += !x.api_input.has_value();
  EXPECT_EQ(without_usage, 1);
}

TEST_P(StoreTest, StampPatchesSurviveAReplayOfTheRecord) {
  store_->upsert(make_record("e", "t", "1", 10));
  const ports::StampPatch patches[] = {{"e#t", "1", 100, 200}, {"e#t", "missing", 1, 2}};
  EXPECT_EQ(store_->update_stamps(patches), 1u);
  store_->upsert(make_record("e", "t", "1", 10));  // redelivered record carries no stamps
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].publish_acked, 100);
  EXPECT_EQ(rows[0].input_deleted, 200);
}

TEST_P(StoreTest, ScanFiltersByExperimentAndListsThem) {
  store_->upsert(make_record("a", "t", "1", 1));
  store_->upsert(make_record("b", "t", "1", 1));
  store_->upsert(make_record("b", "t", "2", 1));
  EXPECT_EQ(scan("a").size(), 1u);
  EXPECT_EQ(scan("b").size(), 2u);
  EXPECT_EQ(scan("").size(), 3u);
  EXPECT_EQ(ports::experiments_in(*store_), (std::vector<std::string>{"a", "b"}));
}

TEST_P(StoreTest, ReopeningKeepsTheRecords) {
  store_->upsert(make_record("e", "t", "1", 1));
  store_ = reopen();
  EXPECT_EQ(scan("e").size(), 1u);
}

TEST_P(StoreTest, UpsertBatchReportsNoFailureForGoodRecordsAndEveryFieldRoundTrips) {
  ports::Record r = make_record("e", "t", "all", 77);
  // Every field a distinct value, through the field table, so a backend that drops or swaps one fails.
  std::int64_t n = 1000;
  for (const auto& f : ports::kRecordFields) {
    if (f.key || f.name == "experiment") continue;
    if (f.type == ports::FieldType::text) f.set(r, std::string_view(std::string(f.name) + " é\"'\n"));
    else if (f.type == ports::FieldType::boolean) f.set(r, std::int64_t(1));
    else if (f.type == ports::FieldType::real) f.set(r, static_cast<double>(++n) / 7e7);  // no short decimal
    else f.set(r, ++n);
  }
  const ports::Record batch[] = {r};
  EXPECT_TRUE(store_->upsert_batch(batch).empty());
  const auto rows = scan("e");
  ASSERT_EQ(rows.size(), 1u);
  for (const auto& f : ports::kRecordFields) EXPECT_EQ(f.get(rows[0]), f.get(r)) << f.name;
  EXPECT_TRUE(store_->upsert_batch(std::span<const ports::Record>()).empty());
}

TEST_P(StoreTest, AReplayNeverErasesPatchedStampsButANewValueReplacesThem) {
  store_->upsert(make_record("e", "t", "1", 10));
  const ports::StampPatch first[] = {{"e#t", "1", 100, 0}};
  EXPECT_EQ(store_->update_stamps(first), 1u);
  const ports::StampPatch second[] = {{"e#t", "1", 0, 200}};  // a zero in a patch keeps the stored value too
  EXPECT_EQ(store_->update_stamps(second), 1u);
  ports::Record replay = make_record("e", "t", "1", 10);
  EXPECT_TRUE(store_->upsert_batch(std::span<const ports::Record>(&replay, 1)).empty());
  auto rows = scan("e");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].publish_acked, 100);
  EXPECT_EQ(rows[0].input_deleted, 200);
  replay.publish_acked = 300;
  store_->upsert(replay);
  EXPECT_EQ(scan("e")[0].publish_acked, 300);
  EXPECT_EQ(scan("e")[0].input_deleted, 200);
}

TEST_P(StoreTest, ConcurrentWritersAllLand) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const std::string id = std::to_string(t) + "-" + std::to_string(i);
        if (i % 2) store_->upsert(make_record("c", "t", id, i));
        else {
          const ports::Record b[] = {make_record("c", "t", id, i)};
          EXPECT_TRUE(store_->upsert_batch(b).empty());
        }
        const ports::StampPatch p[] = {{"c#t", id, 1, 2}};
        EXPECT_EQ(store_->update_stamps(p), 1u);
      }
    });
  for (auto& th : threads) th.join();
  const auto rows = scan("c");
  EXPECT_EQ(rows.size(), 100u);
  for (const auto& r : rows) EXPECT_EQ(r.input_deleted, 2) << r.id;
}

}  // namespace overhead::pipe::contract
