#include "stats/histogram.hpp"

#include <algorithm>
#include <cmath>

#include "stats/errors.hpp"

namespace overhead::stats {

std::vector<double> log_edges(double lo, double hi, std::size_t bins) {
  if (!(lo > 0) || !(hi > lo) || bins == 0) {
    throw StatsError("log-spaced bins need 0 < lo < hi and at least one bin");
  }
  std::vector<double> edges(bins + 1);
  const double a = std::log(lo), b = std::log(hi);
  for (std::size_t i = 0; i <= bins; ++i) edges[i] = std::exp(a + (b - a) * static_cast<double>(i) / static_cast<double>(bins));
  edges.front() = lo;  // exact ends, as numpy.geomspace
  edges.back() = hi;
  return edges;
}

Histogram histogram(std::span<const double> values, std::vector<double> edges, std::span<const unsigned char> select) {
  if (edges.size() < 2) throw StatsError("a histogram needs at least two edges");
  Histogram h;
  h.edges = std::move(edges);
  h.counts.assign(h.edges.size() - 1, 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!select.empty() && !select[i]) continue;
    const double v = values[i];
    if (std::isnan(v)) {
      ++h.missing;
    } else if (v < h.edges.front()) {
      ++h.below;
    } else if (v > h.edges.back()) {
      ++h.above;
    } else {
      // First edge greater than v, minus one: the bin [e_k, e_k+1) holding v.
      auto it = std::upper_bound(h.edges.begin(), h.edges.end(), v);
      std::size_t bin = static_cast<std::size_t>(it - h.edges.begin());
      bin = bin == 0 ? 0 : bin - 1;
      if (bin >= h.counts.size()) bin = h.counts.size() - 1;  // v == last edge
      ++h.counts[bin];
    }
  }
  return h;
}

}  // namespace overhead::stats
