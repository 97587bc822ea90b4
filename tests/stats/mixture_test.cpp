#include "stats/mixture.hpp"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace overhead::stats {
namespace {

// One item in ten pays a round trip ~20x its own cost: the upper mode holds ~10%.
TEST(Mixture, FindsTheBatchHump) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> fast(std::log(50.0), 0.3), slow(std::log(1000.0), 0.2);
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) v.push_back(i % 10 == 9 ? slow(rng) : fast(rng));
  const TwoModes m = fit_two_modes(v);
  ASSERT_TRUE(m.fitted);
  EXPECT_NEAR(m.upper_share, 0.10, 0.005);
  EXPECT_NEAR(m.weight_high, 0.10, 0.01);
  EXPECT_GT(m.threshold, 100);
  EXPECT_LT(m.threshold, 700);
  EXPECT_LT(m.bic_two, m.bic_one);
}

TEST(Mixture, OneModePrefersOneComponent) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> d(std::log(50.0), 0.3);
  std::vector<double> v;
  for (int i = 0; i < 5000; ++i) v.push_back(d(rng));
  const TwoModes m = fit_two_modes(v);
  if (m.fitted) {
    EXPECT_GT(m.bic_two, m.bic_one - 20);  // no strong evidence for a second mode
  }
}

TEST(Mixture, TooFewOrDegenerateValues) {
  EXPECT_FALSE(fit_two_modes(std::vector<double>{1, 2, 3}).fitted);
  EXPECT_FALSE(fit_two_modes(std::vector<double>(50, 7.0)).fitted);
  EXPECT_FALSE(fit_two_modes(std::vector<double>{0, -1, std::nan(""), 4}).fitted);
}

}  // namespace
}  // namespace overhead::stats
