#include "cost/latency_sketch.hpp"

#include <algorithm>
#include <cmath>

#include "cost/cost_model.hpp"

namespace overhead::cost {
namespace {

constexpr double kGrowth = 1.01;
constexpr double kSmallest = 1e-9;  // seconds; smaller positive values share the first bucket
const double kLogGrowth = std::log(kGrowth);
constexpr std::size_t kBuckets = 5200;  // 1e-9 x 1.01^5200 is about 1e9 s

}  // namespace

LatencySketch::LatencySketch() : buckets_(kBuckets, 0) {}

void LatencySketch::add(double x) { add(x, 1); }

void LatencySketch::add(double x, std::uint64_t times) {
  if (times == 0) return;
  count_ += times;
  if (!(x > 0)) {
    zeros_ += times;
    return;
  }
  sum_ += x * static_cast<double>(times);
  double k = std::floor(std::log(x / kSmallest) / kLogGrowth);
  if (k < 0) k = 0;
  if (k > static_cast<double>(kBuckets - 1)) k = static_cast<double>(kBuckets - 1);
  buckets_[static_cast<std::size_t>(k)] += times;
}

double LatencySketch::quantile(double q) const {
  if (count_ == 0) return 0;
  // The rank of the value, as stats::quantiles' nearest rank: ceil(q x n), at least 1.
  const double rank = std::max(1.0, std::ceil(q * static_cast<double>(count_)));
  double seen = static_cast<double>(zeros_);
  if (rank <= seen) return 0;
  for (std::size_t k = 0; k < kBuckets; ++k) {
    seen += static_cast<double>(buckets_[k]);
    if (rank <= seen) return kSmallest * std::pow(kGrowth, static_cast<double>(k) + 0.5);
  }
  return kSmallest * std::pow(kGrowth, static_cast<double>(kBuckets) - 0.5);
}

Percentiles LatencySketch::percentiles() const {
  return {mean(), quantile(0.5), quantile(0.95), quantile(0.99)};
}

}  // namespace overhead::cost
