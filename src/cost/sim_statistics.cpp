#include "cost/sim_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "stats/quantile.hpp"

namespace overhead::cost {

Percentiles summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  const double qs[] = {0.5, 0.95, 0.99};
  const auto q = stats::quantiles(v, qs);
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  return {sum / static_cast<double>(v.size()), q[0], q[1], q[2]};
}

std::pair<double, std::size_t> time_average_count(std::vector<double> ups, std::vector<double> downs, double span) {
  std::sort(ups.begin(), ups.end());
  std::sort(downs.begin(), downs.end());
  double area = 0, last = 0;
  long long count = 0, peak = 0;
  std::size_t u = 0, d = 0;
  while (u < ups.size() || d < downs.size()) {
    // A departure at the same instant as an arrival goes first, so a zero wait counts zero.
    const bool down = d < downs.size() && (u == ups.size() || downs[d] <= ups[u]);
    const double t = down ? downs[d] : ups[u];
    area += static_cast<double>(count) * (t - last);
    last = t;
    if (down) {
      --count;
      ++d;
    } else {
      ++count;
      ++u;
      peak = std::max(peak, count);
    }
  }
  return {span > 0 ? area / span : 0, static_cast<std::size_t>(peak)};
}

std::vector<double> count_at(std::vector<double> ups, std::vector<double> downs, const std::vector<double>& times) {
  std::sort(ups.begin(), ups.end());
  std::sort(downs.begin(), downs.end());
  std::vector<double> out;
  out.reserve(times.size());
  std::size_t u = 0, d = 0;
  for (const double t : times) {
    while (u < ups.size() && ups[u] <= t) ++u;
    while (d < downs.size() && downs[d] <= t) ++d;
    out.push_back(static_cast<double>(u) - static_cast<double>(d));
  }
  return out;
}

double mean_concurrency(const std::vector<double>& starts, const std::vector<double>& durations) {
  if (starts.empty()) return 0;
  std::vector<double> ends(starts.size()), at = starts;
  for (std::size_t i = 0; i < starts.size(); ++i) ends[i] = starts[i] + durations[i];
  std::sort(at.begin(), at.end());
  const auto counts = count_at(starts, std::move(ends), at);
  return std::accumulate(counts.begin(), counts.end(), 0.0) / static_cast<double>(counts.size());
}

double rate_of_spread(const std::vector<double>& arrivals) {
  const auto [first, last] = std::minmax_element(arrivals.begin(), arrivals.end());
  const std::size_t n = arrivals.size();
  return n > 1 && *last > *first ? static_cast<double>(n - 1) / (*last - *first) : std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> depth_instants(double span, std::size_t samples) {
  std::vector<double> times;
  for (std::size_t k = 1; k <= samples; ++k) times.push_back(span * static_cast<double>(k) / static_cast<double>(samples));
  return times;
}

void name_bottleneck(SimResult& r) {
  double worst = -1;
  for (const auto& sr : r.stages) {
    if (sr.saturated && r.saturated_stage.empty()) r.saturated_stage = sr.name;
    if (sr.offered_load > worst) {
      worst = sr.offered_load;
      r.bottleneck_stage = sr.name;
    }
  }
}

void DepthGrid::add(double x, int step) {
  if (!(x >= 0) || !std::isfinite(x)) return;
  while (x >= width_ * static_cast<double>(kCells)) coarsen();
  cells_[static_cast<std::size_t>(x / width_)] += step;
}

double DepthGrid::at(double t) const {
  const auto last = std::min<std::size_t>(kCells, static_cast<std::size_t>(std::max(0.0, t / width_)));
  long long sum = 0;
  for (std::size_t i = 0; i < last; ++i) sum += cells_[i];
  return static_cast<double>(sum);
}

std::size_t DepthGrid::max() const {
  long long sum = 0, peak = 0;
  for (const auto c : cells_) peak = std::max(peak, sum += c);
  return static_cast<std::size_t>(peak);
}

void DepthGrid::coarsen() {
  for (std::size_t i = 0; i < kCells / 2; ++i) cells_[i] = cells_[2 * i] + cells_[2 * i + 1];
  std::fill(cells_.begin() + kCells / 2, cells_.end(), 0);
  width_ *= 2;
}

}  // namespace overhead::cost
