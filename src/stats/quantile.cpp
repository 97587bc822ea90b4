#include "stats/quantile.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "stats/errors.hpp"

namespace overhead::stats {

namespace {

// numpy's _lerp: the two-sided form keeps the result monotone in t and exact at both ends.
double numpy_lerp(double a, double b, double t) {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

void check_q(double q) {
  if (!(q >= 0.0 && q <= 1.0)) throw StatsError("quantile: q must be in [0, 1], got " + std::to_string(q));
}

}  // namespace

double quantile_sorted(std::span<const double> sorted, double q) {
  check_q(q);
  if (sorted.empty()) throw StatsError("quantile of an empty sample");
  const std::size_t n = sorted.size();
  const double virtual_index = static_cast<double>(n - 1) * q;
  const double previous = std::floor(virtual_index);
  const double gamma = virtual_index - previous;
  const auto lo = static_cast<std::size_t>(previous);
  const std::size_t hi = std::min(lo + 1, n - 1);
  return numpy_lerp(sorted[lo], sorted[hi], gamma);
}

std::vector<double> quantiles(std::span<const double> values, std::span<const double> qs) {
  for (double q : qs) check_q(q);
  if (values.empty()) throw StatsError("quantile of an empty sample");
  if (std::any_of(values.begin(), values.end(), [](double v) { return std::isnan(v); })) {
    return std::vector<double>(qs.size(), std::nan(""));
  }
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> out;
  out.reserve(qs.size());
  for (double q : qs) out.push_back(quantile_sorted(sorted, q));
  return out;
}

double median_inplace(std::vector<double>& scratch) {
  if (scratch.empty()) throw StatsError("median of an empty sample");
  const std::size_t n = scratch.size();
  const std::size_t mid = n / 2;
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(mid), scratch.end());
  const double upper = scratch[mid];
  if (n % 2 == 1) return upper;
  const double lower = *std::max_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(mid));
  return numpy_lerp(lower, upper, 0.5);
}

Summary summarize(std::span<const double> values) {
  Summary s;
  std::vector<double> finite;
  finite.reserve(values.size());
  for (double v : values) {
    if (std::isfinite(v)) {
      finite.push_back(v);
    } else {
      ++s.n_missing;
    }
  }
  if (finite.empty()) throw StatsError("summary of a sample with no finite value");
  std::sort(finite.begin(), finite.end());
  s.n = finite.size();
  s.q1 = quantile_sorted(finite, 0.25);
  s.median = quantile_sorted(finite, 0.5);
  s.q3 = quantile_sorted(finite, 0.75);
  s.min = finite.front();
  s.max = finite.back();
  // Kahan-Neumaier sum: exact for integer counts (< 2^53) and close to numpy's pairwise sum otherwise.
  double sum = 0, carry = 0;
  for (double v : finite) {
    const double t = sum + v;
    carry += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  s.sum = sum + carry;
  s.mean = s.sum / static_cast<double>(s.n);
  return s;
}

}  // namespace overhead::stats
