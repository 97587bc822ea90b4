#include "report/item_table.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "support/record_generator.hpp"

namespace overhead::report {
namespace {

ports::Record item(const std::string& worker, std::int64_t seq, std::int64_t received, std::int64_t batch = 0) {
  ports::Record r;
  r.experiment = "e";
  r.tokenizer = "t";
  r.id = std::string(worker).append(std::to_string(seq));
  r.worker = worker;
  r.case_number = 5;
  r.seq = seq;
  r.batch = batch;
  r.batch_boundary = seq == 0 || batch != 0;
  r.token_count = 10;
  r.received = received;
  r.render_start = received + 1000;
  r.render_end = received + 3000;
  r.encode_end = received + 6000;
  r.publish_start = received + 7000;
  r.publish_acked = received + 9000;
  return r;
}

// Two runs reuse the worker name and start their sequences and clocks afresh: the later run's
// seq 0..1 and the earlier run's seq 2..3 are two workers, not one whose items jump in time.
TEST(ItemTable, RunsWithTheSameWorkerNameAreDifferentWorkers) {
  std::vector<ports::Record> rs = {item("w", 0, 5'000'000), item("w", 1, 5'020'000), item("w", 2, 40'000),
                                  item("w", 3, 60'000)};
  rs[0].run_id = rs[1].run_id = "later";
  rs[2].run_id = rs[3].run_id = "earlier";
  const ItemTable t = build_item_table(rs);
  EXPECT_EQ(t.nonpositive_cycles, 0u);
  EXPECT_DOUBLE_EQ(t.cycle_us[0], 20.0);
  EXPECT_DOUBLE_EQ(t.cycle_us[2], 20.0);
  for (std::size_t i = 0; i < rs.size(); ++i) EXPECT_FALSE(std::isnan(t.cycle_us[i])) << i;
}

TEST(ItemTable, CycleRunsToTheNextStartAndStagesAddUp) {
  // Given out of order: the table orders by seq within the worker.
  std::vector<ports::Record> rs = {item("w", 1, 20'000, 1), item("w", 0, 0 + 1'000'000)};
  rs[1].received = 10'000;
  rs[1].render_start = 11'000;
  rs[1].render_end = 13'000;
  rs[1].encode_end = 16'000;
  rs[1].publish_start = 17'000;
  rs[1].publish_acked = 19'000;
  const ItemTable t = build_item_table(rs);
  // seq 0: 10'000 -> 20'000 = 10 us; its cycle spans the turnover to batch 1.
  EXPECT_DOUBLE_EQ(t.cycle_us[1], 10.0);
  EXPECT_EQ(t.turnover[1], 1);
  EXPECT_DOUBLE_EQ(t.stage_us[kWait][1], 1.0);
  EXPECT_DOUBLE_EQ(t.stage_us[kRender][1], 2.0);
  EXPECT_DOUBLE_EQ(t.stage_us[kEncode][1], 3.0);
  EXPECT_DOUBLE_EQ(t.stage_us[kRecord][1], 1.0);
  EXPECT_DOUBLE_EQ(t.stage_us[kPublish][1], 2.0);
  EXPECT_DOUBLE_EQ(t.stage_us[kDelete][1], 0.0);  // no input queue: stamp 0
  EXPECT_DOUBLE_EQ(t.stage_us[kReceiveWait][1], 1.0);
  EXPECT_DOUBLE_EQ(t.service_us[1], 9.0);
  // The last item of the worker ends at its own latest stamp (publish_acked).
  EXPECT_DOUBLE_EQ(t.cycle_us[0], 9.0);
  EXPECT_EQ(t.turnover[0], 0);
}

TEST(ItemTable, AsyncPublishCountsOnlyUntilTheNextStart) {
  std::vector<ports::Record> rs = {item("w", 0, 10'000), item("w", 1, 15'000)};
  rs[0].publish_acked = 40'000;  // acknowledged long after the worker moved on
  const ItemTable t = build_item_table(rs);
  EXPECT_DOUBLE_EQ(t.cycle_us[0], 5.0);
  EXPECT_DOUBLE_EQ(t.stage_us[kPublish][0], 0.0);  // publish_start (17'000) is after the next start
  double sum = 0;
  for (std::size_t s = 0; s < kStageCount; ++s) sum += t.stage_us[s][0];
  EXPECT_DOUBLE_EQ(sum, t.cycle_us[0]);
}

TEST(ItemTable, MissingStampsAndBadOrderAreCountedNotFatal) {
  std::vector<ports::Record> rs = {item("w", 0, 10'000), item("w", 1, 0), item("v", 0, 5'000), item("v", 1, 5'000)};
  rs[0].token_count = -3;
  const ItemTable t = build_item_table(rs);
  EXPECT_EQ(t.missing_stamps, 1u);
  EXPECT_EQ(t.nonpositive_cycles, 1u);
  EXPECT_EQ(t.negative_tokens, 1u);
  EXPECT_TRUE(std::isnan(t.cycle_us[1]));
  EXPECT_TRUE(std::isnan(t.cycle_us[2]));
  EXPECT_TRUE(std::isnan(t.tokens[0]));
  EXPECT_EQ(t.warnings.size(), 3u);
}

TEST(ItemTable, ManyWorkersKeepTheirOwnTimelines) {
  testing::GeneratorOptions o;
  o.workers = 7;
  o.items_per_tokenizer = 700;
  o.noise_us = 1;
  const ItemTable t = build_item_table(testing::generate_records(o));
  std::size_t turnovers = 0, timed = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    ASSERT_FALSE(std::isnan(t.cycle_us[i])) << i;
    EXPECT_GT(t.cycle_us[i], 0);
    turnovers += t.turnover[i];
    ++timed;
  }
  EXPECT_EQ(timed, 2100u);
  // 300 items per worker in batches of 10: 29 turnovers each.
  EXPECT_EQ(turnovers, 7u * 29u);
  ASSERT_EQ(t.runs.size(), 1u);
  EXPECT_EQ(t.runs[0].workers, 7u);
}

}  // namespace
}  // namespace overhead::report
