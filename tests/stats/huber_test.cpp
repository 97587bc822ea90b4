#include "stats/huber.hpp"

#include <string>

#include <gtest/gtest.h>

#include "goldens.hpp"
#include "stats/errors.hpp"

namespace overhead::stats {
namespace {

using testing::close_rel;
using testing::doubles;

// Same iterations as statsmodels' RLM, so the same answer up to floating-point noise of each
// weighted solve (compounded over up to ~30 iterations): 1e-8 relative.
constexpr double kRel = 1e-8;

TEST(Huber, MatchesStatsmodelsRlm) {
  for (const auto& c : testing::goldens()["ols"]) {
    const std::vector<double> y = doubles(c["y"]), tokens = doubles(c["tokens"]), turnover = doubles(c["turnover"]);
    for (const std::string model : {"a", "b"}) {
      const auto& e = c["fits"][model]["huber"];
      std::vector<Regressor> xs;
      if (model == "b") xs.push_back({"turnover", turnover});
      xs.push_back({"tokens", tokens});
      const RobustFit fit = huber(y, xs);
      const std::string where = c["name"].get<std::string>() + " (" + model + ")";
      EXPECT_EQ(fit.iterations, e["iterations"].get<int>()) << where;
      EXPECT_TRUE(close_rel(fit.scale, e["scale"], kRel)) << where;
      ASSERT_EQ(fit.coefficients.size(), e["coefficients"].size());
      for (std::size_t i = 0; i < fit.coefficients.size(); ++i) {
        const auto& ec = e["coefficients"][i];
        EXPECT_TRUE(close_rel(fit.coefficients[i].estimate, ec["estimate"], kRel)) << where << " " << i;
        EXPECT_TRUE(close_rel(fit.coefficients[i].std_error, ec["std_error"], kRel)) << where << " " << i;
        EXPECT_TRUE(close_rel(fit.coefficients[i].p, ec["p"], kRel, 1e-300)) << where << " " << i;
        EXPECT_TRUE(close_rel(fit.coefficients[i].ci_low, ec["ci_low"], kRel)) << where << " " << i;
      }
    }
  }
}

TEST(Huber, OutlierBarelyMovesTheRobustSlope) {
  std::vector<double> x, y;
  for (int i = 0; i < 50; ++i) {
    x.push_back(i);
    y.push_back(10 + 2.0 * i + ((i % 3) - 1) * 0.5);
  }
  y[49] += 5000;  // one wild point
  const std::vector<Regressor> xs = {{"tokens", x}};
  const RobustFit fit = huber(y, xs);
  EXPECT_NEAR(fit.coefficients[1].estimate, 2.0, 0.05);
  EXPECT_GT(fit.downweighted_share, 0.0);
}

TEST(Huber, SingularDesignIsAnError) {
  const std::vector<double> y = {1, 2, 3, 4}, x = {2, 2, 2, 2};
  const std::vector<Regressor> xs = {{"tokens", x}};
  EXPECT_THROW(huber(y, xs), StatsError);
}

}  // namespace
}  // namespace overhead::stats
