// Histograms with log-spaced bins: per-item times span three or more decades (a render in
// microseconds, a batch round trip in milliseconds), so equal-width bins would put every item
// but the slow ones in the first bin.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace overhead::stats {

// bins + 1 edges from lo to hi spaced evenly in log (numpy.geomspace); lo, hi > 0, lo < hi.
std::vector<double> log_edges(double lo, double hi, std::size_t bins);

struct Histogram {
  std::vector<double> edges;         // bins + 1, ascending
  std::vector<std::size_t> counts;   // bins; the last bin is closed on the right (numpy's rule)
  std::size_t below = 0, above = 0;  // values outside [edges.front(), edges.back()]
  std::size_t missing = 0;           // NaN values
};

// Counts values per bin; `select`, when not empty, keeps only values whose flag is non-zero.
Histogram histogram(std::span<const double> values, std::vector<double> edges,
                    std::span<const unsigned char> select = {});

}  // namespace overhead::stats
