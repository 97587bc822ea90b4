// The committed reference values (data/stats/goldens.json, from scripts/make_stats_goldens.py).
#pragma once

#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace overhead::stats::testing {

const nlohmann::json& goldens();
std::vector<double> doubles(const nlohmann::json& array);

// |a - b| <= rel * |b|, with `abs_floor` for values that are zero in the reference.
inline ::testing::AssertionResult close_rel(double a, double b, double rel, double abs_floor = 0) {
  if (std::isnan(a) && std::isnan(b)) return ::testing::AssertionSuccess();
  const double diff = std::fabs(a - b);
  if (diff <= rel * std::fabs(b) || diff <= abs_floor) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs reference " << b << " (relative difference "
                                       << diff / std::fabs(b) << ")";
}

}  // namespace overhead::stats::testing
