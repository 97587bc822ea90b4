#include "stats/ols.hpp"

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "goldens.hpp"
#include "stats/errors.hpp"

namespace overhead::stats {
namespace {

using testing::close_rel;
using testing::doubles;

constexpr double kRel = 1e-9;

void expect_coefficients(const std::vector<Coefficient>& got, const nlohmann::json& expected, double rel,
                         const std::string& where) {
  ASSERT_EQ(got.size(), expected.size()) << where;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto& e = expected[i];
    const std::string at = where + " " + got[i].name;
    EXPECT_EQ(got[i].name, e["name"].get<std::string>()) << at;
    EXPECT_TRUE(close_rel(got[i].estimate, e["estimate"], rel)) << at << " estimate";
    EXPECT_TRUE(close_rel(got[i].std_error, e["std_error"], rel)) << at << " std_error";
    EXPECT_TRUE(close_rel(got[i].t, e["t"], rel)) << at << " t";
    // p underflows to 0 in both for large |t|; below 1e-300 only absolute agreement is meaningful.
    EXPECT_TRUE(close_rel(got[i].p, e["p"], rel, 1e-300)) << at << " p";
    EXPECT_TRUE(close_rel(got[i].ci_low, e["ci_low"], rel)) << at << " ci_low";
    EXPECT_TRUE(close_rel(got[i].ci_high, e["ci_high"], rel)) << at << " ci_high";
    // statsmodels' own interval carries scipy's t.ppf error (~4e-9, see the golden script).
    EXPECT_TRUE(close_rel(got[i].ci_low, e["ci_low_statsmodels"], 1e-8)) << at << " ci_low (statsmodels)";
    EXPECT_TRUE(close_rel(got[i].ci_high, e["ci_high_statsmodels"], 1e-8)) << at << " ci_high (statsmodels)";
  }
}

TEST(Ols, MatchesStatsmodels) {
  for (const auto& c : testing::goldens()["ols"]) {
    const std::vector<double> y = doubles(c["y"]), tokens = doubles(c["tokens"]), turnover = doubles(c["turnover"]);
    for (const std::string model : {"a", "b"}) {
      const auto& e = c["fits"][model]["ols"];
      std::vector<Regressor> xs;
      if (model == "b") xs.push_back({"turnover", turnover});
      xs.push_back({"tokens", tokens});
      const OlsFit fit = ols(y, xs);
      const std::string where = c["name"].get<std::string>() + " (" + model + ")";
      expect_coefficients(fit.coefficients, e["coefficients"], kRel, where);
      EXPECT_EQ(fit.n, e["n"].get<std::size_t>()) << where;
      EXPECT_EQ(fit.df_resid, e["df_resid"].get<double>()) << where;
      EXPECT_TRUE(close_rel(fit.r_squared, e["r_squared"], kRel)) << where;
      EXPECT_TRUE(close_rel(fit.adj_r_squared, e["adj_r_squared"], kRel)) << where;
      EXPECT_TRUE(close_rel(fit.resid_sd, e["resid_sd"], kRel)) << where;
      EXPECT_TRUE(close_rel(fit.ssr, e["ssr"], kRel)) << where;
      EXPECT_TRUE(close_rel(fit.f_statistic, e["f_statistic"], kRel)) << where;
      EXPECT_TRUE(close_rel(fit.f_p, e["f_p"], kRel, 1e-300)) << where;
    }
  }
}

TEST(Ols, ConstantRegressorIsASingularDesignWithAClearMessage) {
  const std::vector<double> y = {1, 2, 3, 4}, x = {5, 5, 5, 5};
  const std::vector<Regressor> xs = {{"tokens", x}};
  try {
    ols(y, xs);
    FAIL() << "expected a StatsError";
  } catch (const StatsError& e) {
    EXPECT_NE(std::string(e.what()).find("'tokens' is constant (every value is 5)"), std::string::npos) << e.what();
  }
}

TEST(Ols, CollinearRegressorsAreNamed) {
  const std::vector<double> y = {1, 2, 3, 5, 8}, a = {1, 2, 3, 4, 5}, b = {2, 4, 6, 8, 10};
  const std::vector<Regressor> xs = {{"a", a}, {"b", b}};
  EXPECT_THROW(
      {
        try {
          ols(y, xs);
        } catch (const StatsError& e) {
          EXPECT_NE(std::string(e.what()).find("collinear"), std::string::npos) << e.what();
          throw;
        }
      },
      StatsError);
}

TEST(Ols, TooFewObservations) {
  const std::vector<double> y = {1, 2}, x = {1, 2};
  const std::vector<Regressor> xs = {{"tokens", x}};
  try {
    ols(y, xs);
    FAIL();
  } catch (const StatsError& e) {
    EXPECT_NE(std::string(e.what()).find("too few observations: 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ols(std::vector<double>{}, xs), StatsError);
}

TEST(Ols, ThreeObservationsFit) {
  const std::vector<double> y = {1, 2, 4}, x = {1, 2, 3};
  const std::vector<Regressor> xs = {{"tokens", x}};
  const OlsFit fit = ols(y, xs);
  EXPECT_EQ(fit.df_resid, 1);
  EXPECT_NEAR(fit.coefficients[1].estimate, 1.5, 1e-12);
  EXPECT_NEAR(fit.coefficients[0].estimate, -2.0 / 3.0, 1e-12);
}

TEST(Ols, NonFiniteValuesAreRejectedByPosition) {
  const std::vector<double> y = {1, std::numeric_limits<double>::quiet_NaN(), 3, 4}, x = {1, 2, 3, 4};
  const std::vector<Regressor> xs = {{"tokens", x}};
  try {
    ols(y, xs);
    FAIL();
  } catch (const StatsError& e) {
    EXPECT_NE(std::string(e.what()).find("response value 1 is not finite"), std::string::npos) << e.what();
  }
}

TEST(Ols, MismatchedLengths) {
  const std::vector<double> y = {1, 2, 3, 4}, x = {1, 2, 3};
  const std::vector<Regressor> xs = {{"tokens", x}};
  EXPECT_THROW(ols(y, xs), StatsError);
}

}  // namespace
}  // namespace overhead::stats
