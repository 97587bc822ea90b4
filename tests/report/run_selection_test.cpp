// Telling runs apart in a store's records: the runs per experiment, one run's records, and the
// sentence that names an experiment's runs.
#include <gtest/gtest.h>

#include "report/run_selection.hpp"

namespace overhead::report {
namespace {

ports::Record rec(const std::string& experiment, const std::string& id, const std::string& run) {
  ports::Record r;
  r.experiment = experiment;
  r.id = id;
  r.run_id = run;
  return r;
}

TEST(RunSelection, CountsTheRunsOfEachExperiment) {
  const std::vector<ports::Record> all{rec("e2", "1", "r2"), rec("e1", "1", "r1"), rec("e2", "2", "r1"),
                                      rec("e2", "3", "r2"), rec("e2", "4", "")};
  const auto runs = runs_by_experiment(all);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].experiment, "e1");
  ASSERT_EQ(runs[0].runs.size(), 1u);
  EXPECT_EQ(runs[0].runs[0].records, 1u);
  ASSERT_EQ(runs[1].runs.size(), 3u);
  EXPECT_EQ(runs[1].runs[0].run_id, "");
  EXPECT_EQ(runs[1].runs[2].run_id, "r2");
  EXPECT_EQ(runs[1].runs[2].records, 2u);
  EXPECT_EQ(describe_runs(runs[1]), "e2 holds records of 3 runs: (no run id) (1), r1 (1), r2 (2)");
  EXPECT_EQ(describe_runs(runs[0]), "e1 holds records of 1 run: r1 (1)");
}

TEST(RunSelection, KeepsOneRunInOrder) {
  std::vector<ports::Record> all{rec("e", "1", "a"), rec("e", "2", "b"), rec("e", "3", "a"), rec("f", "4", "a")};
  EXPECT_EQ(keep_run(all, "a"), 1u);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, "1");
  EXPECT_EQ(all[1].id, "3");
  EXPECT_EQ(all[2].id, "4");
  EXPECT_EQ(keep_run(all, "zzz"), 3u);
  EXPECT_TRUE(all.empty());
}

}  // namespace
}  // namespace overhead::report
