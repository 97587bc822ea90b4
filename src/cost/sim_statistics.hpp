// The statistics every simulation in cost/ keeps: percentiles of a run's values, counts that step
// up and down at event times (queue depth, requests in the system) read as time averages, peaks or
// at instants, the instants a run's depth is reported at, and which stage saturates. The
// per-request chain (simulator.cpp) and the closed batch hold every value; the engine simulation
// holds none (LatencySketch for its percentiles, DepthGrid for its depths).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cost/sim_result.hpp"

namespace overhead::cost {

// Mean and nearest-rank p50, p95, p99 of the values (stats::quantiles); all 0 when there are none.
Percentiles summarize(const std::vector<double>& values);

// Time-average and maximum of a count that steps +1 at each `ups` time and -1 at each `downs`
// time, over [0, span]. Computed from the events themselves rather than from the waits, so that
// Little's law is a check of the bookkeeping and not an identity.
std::pair<double, std::size_t> time_average_count(std::vector<double> ups, std::vector<double> downs, double span);

// The count (ups minus downs so far, a departure at an instant counted before an arrival at it)
// at each of the sorted `times`.
std::vector<double> count_at(std::vector<double> ups, std::vector<double> downs, const std::vector<double>& times);

// Mean, over intervals [start, start + duration), of how many intervals are in progress at one's
// start, itself included: the running batch each request found, for the stages whose starts are
// not computed in order.
double mean_concurrency(const std::vector<double>& starts, const std::vector<double>& durations);

// Requests per second into a stage, from the spread of its arrival times; NaN when they all came
// at one instant (the caller then takes the run's rate).
double rate_of_spread(const std::vector<double>& arrivals);

// `samples` instants spread evenly over (0, span], the last at the span: where queue depths are read.
std::vector<double> depth_instants(double span, std::size_t samples);

// The first saturated stage, and the one with the highest offered load, named in the result.
void name_bottleneck(SimResult& r);

// A count that steps +1 and -1 at event times, read at instants on a grid: an event at x counts
// at every instant after it. The grid has a fixed number of cells; when an event falls past its
// end, neighbouring cells merge (the cell width doubles), which keeps the values at the remaining
// instants exact. Memory: kCells counters, however long the run.
class DepthGrid {
 public:
  static constexpr std::size_t kCells = 4096;
  void add(double x, int step);
  // The count at the last grid instant at or before t.
  double at(double t) const;
  std::size_t max() const;

 private:
  void coarsen();
  std::vector<long long> cells_ = std::vector<long long>(kCells, 0);
  double width_ = 1e-3;
};

}  // namespace overhead::cost
