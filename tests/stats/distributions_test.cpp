#include "stats/distributions.hpp"

#include <gtest/gtest.h>

#include "goldens.hpp"

namespace overhead::stats {
namespace {

TEST(StudentT, MatchesScipy) {
  for (const auto& c : testing::goldens()["student_t"]) {
    const double t = c["t"], df = c["df"];
    EXPECT_TRUE(testing::close_rel(student_t_two_sided_p(t, df), c["p"].get<double>(), 1e-9)) << t << " " << df;
    EXPECT_TRUE(testing::close_rel(student_t_quantile(0.975, df), c["q975"].get<double>(), 1e-9)) << df;
  }
}

TEST(StudentT, NormalLimit) {
  EXPECT_NEAR(normal_two_sided_p(1.959963984540054), 0.05, 1e-12);
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
}

}  // namespace
}  // namespace overhead::stats
