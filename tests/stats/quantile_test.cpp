#include "stats/quantile.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "goldens.hpp"
#include "stats/errors.hpp"

namespace overhead::stats {
namespace {

using testing::doubles;
using testing::goldens;

// numpy's quantiles are matched bit for bit, not within a tolerance.
TEST(Quantile, MatchesNumpyExactly) {
  for (const auto& c : goldens()["quantiles"]) {
    const std::vector<double> values = doubles(c["values"]);
    const std::vector<double> qs = doubles(c["qs"]);
    const std::vector<double> expected = doubles(c["expected"]);
    const std::vector<double> got = quantiles(values, qs);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i], expected[i]) << c["name"] << " q=" << qs[i];
    }
    std::vector<double> scratch = values;
    EXPECT_EQ(median_inplace(scratch), c["median"].get<double>()) << c["name"];
  }
}

TEST(Quantile, SummaryMatchesNumpy) {
  for (const auto& c : goldens()["quantiles"]) {
    const Summary s = summarize(doubles(c["values"]));
    const std::vector<double> expected = doubles(c["expected"]);
    EXPECT_EQ(s.q1, expected[2]) << c["name"];
    EXPECT_EQ(s.median, expected[4]) << c["name"];
    EXPECT_EQ(s.q3, expected[6]) << c["name"];
    EXPECT_TRUE(testing::close_rel(s.sum, c["sum"].get<double>(), 1e-12, 1e-9)) << c["name"];
    EXPECT_TRUE(testing::close_rel(s.mean, c["mean"].get<double>(), 1e-12, 1e-12)) << c["name"];
  }
}

TEST(Quantile, NanGivesNanLikeNumpy) {
  const std::vector<double> v = {1, std::nan(""), 3};
  const std::vector<double> q = {0.5};
  EXPECT_TRUE(std::isnan(quantiles(v, q)[0]));
}

TEST(Quantile, SummaryLeavesOutMissingValues) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Summary s = summarize(std::vector<double>{4, nan, 1, 3, std::numeric_limits<double>::infinity(), 2});
  EXPECT_EQ(s.n, 4u);
  EXPECT_EQ(s.n_missing, 2u);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.sum, 10);
}

TEST(Quantile, EmptyAndBadQAreErrors) {
  EXPECT_THROW(quantiles(std::vector<double>{}, std::vector<double>{0.5}), StatsError);
  EXPECT_THROW(quantiles(std::vector<double>{1.0}, std::vector<double>{1.5}), StatsError);
  EXPECT_THROW(summarize(std::vector<double>{std::nan("")}), StatsError);
}

}  // namespace
}  // namespace overhead::stats
