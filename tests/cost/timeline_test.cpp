// The measured figures of a run (cost/timeline.hpp) on a timeline worked out by hand, the CSV
// round trip, and errors that name the file, line and field.
#include "cost/timeline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace overhead::cost {
namespace {

std::string scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "overhead_cost_timeline_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

// Worker w0: batch 0 = items at 0, 100; batch 1 = item at 350, its last stamp at 500.
// Worker w1: one item at 10, last stamp 90.
std::vector<TimelineItem> hand_run() {
  return {{"phi-4", "w0", 1, 0, false, 20, 100, 180},  // out of order on purpose
          {"phi-4", "w0", 0, 0, true, 10, 0, 90},
          {"phi-4", "w0", 2, 1, true, 30, 350, 500},
          {"gemma", "w1", 0, 0, true, 5, 10, 90}};
}

TEST(Timeline, MeasuresCyclesTurnoverAndTotal) {
  const auto m = measure(hand_run());
  EXPECT_EQ(m.workers, 2u);
  EXPECT_EQ(m.batch, 2u);
  EXPECT_DOUBLE_EQ(m.total_s, 500e-6);
  EXPECT_DOUBLE_EQ(m.cycles_us[1], 100);  // 0 -> 100
  EXPECT_DOUBLE_EQ(m.cycles_us[0], 250);  // 100 -> 350, across the turnover
  EXPECT_TRUE(m.turnover[0]);
  EXPECT_FALSE(m.turnover[1]);
  EXPECT_DOUBLE_EQ(m.cycles_us[2], 150);  // last of w0: to its own last stamp
  EXPECT_DOUBLE_EQ(m.cycles_us[3], 80);
  EXPECT_DOUBLE_EQ(m.cycle_us.mean, (100 + 250 + 150 + 80) / 4.0);
}

TEST(Timeline, QueueOrderIsByStart) {
  const auto q = queue_order(hand_run());
  EXPECT_EQ(q[0].start_us, 0);
  EXPECT_EQ(q[1].worker, "w1");
  EXPECT_EQ(q[3].start_us, 350);
}

TEST(Timeline, CsvRoundTrip) {
  const std::string path = scratch("round.csv");
  write_timeline(path, hand_run());
  const auto back = read_timeline(path);
  ASSERT_EQ(back.size(), 4u);
  EXPECT_EQ(back[2].worker, "w0");
  EXPECT_EQ(back[2].batch, 1);
  EXPECT_TRUE(back[2].boundary);
  EXPECT_DOUBLE_EQ(back[2].tokens, 30);
  EXPECT_EQ(back[2].last_us, 500);
}

TEST(Timeline, BadRowsNameFileLineAndField) {
  const std::string path = scratch("bad.csv");
  {
    std::ofstream out(path);
    out << "tokenizer,worker,seq,batch,boundary,tokens,start_us,last_us\nphi-4,w0,0,0,1,12,0,10\nphi-4,w0,1,0,0,x,10,20\n";
  }
  try {
    read_timeline(path);
    FAIL() << "no error";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3: field tokens"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    out << "id,tokens\n";
  }
  EXPECT_THROW(read_timeline(path), CostError);
  EXPECT_THROW(read_timeline(scratch("missing.csv")), CostError);
}

}  // namespace
}  // namespace overhead::cost
