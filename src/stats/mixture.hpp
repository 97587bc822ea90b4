// Two modes in the per-item times: a two-component Gaussian mixture on log(time), fitted by EM.
//
// The seed's histogram of per-item time is two-humped: most items pay only their own work, and
// about one in ten (a batch of 10) also pays the queue's receive/delete round trip. On log time
// both humps are roughly normal, so a two-component mixture separates them; the split point is
// where the two weighted densities cross between the means. EM runs on a fine histogram of the
// log values (1,024 bins) rather than the raw values: the result differs from the raw-data EM by
// less than a bin width, and a million items cost one pass instead of one per iteration.
#pragma once

#include <cstddef>
#include <span>

namespace overhead::stats {

struct TwoModes {
  bool fitted = false;          // false: fewer than 10 positive values or no spread
  double weight_low = 0, weight_high = 0;
  double mean_low = 0, mean_high = 0;  // of log(time)
  double sd_low = 0, sd_high = 0;
  double threshold = 0;         // in time units: items above it belong to the upper mode
  double upper_share = 0;       // share of the values above threshold
  double bic_one = 0, bic_two = 0;  // BIC of one vs two normals on log time (lower is better)
  int iterations = 0;
};

// Non-positive and non-finite values are ignored.
TwoModes fit_two_modes(std::span<const double> values);

}  // namespace overhead::stats
