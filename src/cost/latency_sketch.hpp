// Latency percentiles in bounded memory: a histogram of logarithmic buckets (each 1% wider than
// the one below, from 1 ns to about 30 years), so a quantile it returns is within 0.5% of a value
// the data holds at that rank, however many values are added. The mean and the count are exact.
// About 5,200 buckets of 8 bytes each, whatever the number of requests.
#pragma once

#include <cstdint>
#include <vector>

namespace overhead::cost {

struct Percentiles;

class LatencySketch {
 public:
  LatencySketch();
  void add(double seconds);  // negative and NaN values count as 0
  void add(double seconds, std::uint64_t times);  // the same value `times` times (a step's tokens)
  std::uint64_t count() const { return count_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }
  // The value at rank q (0..1): the geometric middle of its bucket (relative error <= 0.5%), or
  // exactly 0 for the values that were 0.
  double quantile(double q) const;
  Percentiles percentiles() const;
  static constexpr double kRelativeError = 0.005;

 private:
  std::vector<std::uint64_t> buckets_;
  std::uint64_t zeros_ = 0, count_ = 0;
  double sum_ = 0;
};

}  // namespace overhead::cost
