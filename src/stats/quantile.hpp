// Quantiles exactly as numpy computes them by default (method="linear", the old
// interpolation="linear"): virtual index h = (n-1)*q, lerp between the two neighbours, with numpy's
// own lerp formula (a + (b-a)*t for t < 0.5, b - (b-a)*(1-t) otherwise) so that results are
// bit-identical to numpy.quantile / pandas.quantile, not merely close.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace overhead::stats {

// q in [0, 1] over values sorted ascending; throws StatsError when empty or q is out of range.
double quantile_sorted(std::span<const double> sorted, double q);

// Several quantiles of unsorted values (copied, not modified). Any NaN gives NaN, as in numpy.
std::vector<double> quantiles(std::span<const double> values, std::span<const double> qs);

// Median of values (numpy.median); reorders `scratch` (a copy the caller owns) in O(n).
double median_inplace(std::vector<double>& scratch);

// The seed's token-statistics row: quartiles, sum and mean over the finite values.
struct Summary {
  std::size_t n = 0;          // finite values used
  std::size_t n_missing = 0;  // NaN or infinite values left out
  double q1 = 0, median = 0, q3 = 0, sum = 0, mean = 0, min = 0, max = 0;
};
// Throws StatsError when no finite value is left.
Summary summarize(std::span<const double> values);

}  // namespace overhead::stats
