#include "stats/histogram.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "stats/errors.hpp"

namespace overhead::stats {
namespace {

TEST(Histogram, LogEdgesAreGeometric) {
  const auto e = log_edges(1, 1000, 3);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0], 1);
  EXPECT_NEAR(e[1], 10, 1e-12);
  EXPECT_NEAR(e[2], 100, 1e-10);
  EXPECT_EQ(e[3], 1000);
  EXPECT_THROW(log_edges(0, 10, 3), StatsError);
  EXPECT_THROW(log_edges(5, 5, 3), StatsError);
}

TEST(Histogram, CountsWithNumpyEdgeRules) {
  const std::vector<double> v = {1, 5, 10, 50, 100, 999, 1000, 0.5, 2000, std::nan("")};
  const Histogram h = histogram(v, log_edges(1, 1000, 3));
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{2, 2, 3}));  // [1,10) [10,100) [100,1000]
  EXPECT_EQ(h.below, 1u);
  EXPECT_EQ(h.above, 1u);
  EXPECT_EQ(h.missing, 1u);
}

TEST(Histogram, SelectKeepsFlaggedValues) {
  const std::vector<double> v = {2, 20, 200};
  const std::vector<unsigned char> flag = {0, 1, 1};
  const Histogram h = histogram(v, log_edges(1, 1000, 3), flag);
  EXPECT_EQ(h.counts, (std::vector<std::size_t>{0, 1, 1}));
}

}  // namespace
}  // namespace overhead::stats
