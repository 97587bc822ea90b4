// The simulator for a closed batch, which is what a measured run of case 5 is: N items are already
// in the input queue when the workers start, and W workers take batches of B from it until it is
// empty. Each item costs its fitted E (model "b": alpha + beta * tokens, plus alpha2 on the item
// whose cycle spans a batch turnover), optionally times a ratio drawn from a fitted run's spread,
// so that a fit of one configuration predicts another:
//   - prefetch off: the worker's own thread deletes the finished batch and receives the next, so
//     the turnover item pays alpha2 in line;
//   - prefetch on: two more threads per worker, one receiving and one settling (the delete), take
//     alpha2 (split evenly between the two) up to max_in_flight / B batches ahead, so the
//     processing thread pays it only when they fall behind; a batch's receive waits for the
//     delete that freed its place under the bound;
//   - several workers share the queue: a batch goes to whichever worker asks first;
//   - the workers share `cores` CPU cores with the consumer and the publisher threads: when the
//     CPU they all need is more than the cores give, every item's service stretches (see
//     CpuShare below).
// The figures are the measured ones' (cost/timeline.hpp): per-item cycle from one start to the
// next on a worker, the last to the worker's end, and the total from the first start to the end.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "cost/cost_model.hpp"

namespace overhead::cost {

struct ClosedBatchItem {
  double tokens = 0;
  std::size_t fit = 0;  // index into the fits given to simulate_closed_batch
};

// How a fitted run's measured cycles scatter around its fit, by item size: the ratios measured /
// fitted in bins of fitted E (equal counts), each bin scaled to mean 1. Drawing a ratio from the
// bin of an item's fitted E and multiplying keeps the item's mean at the fit and gives it the
// spread that items of its size had (mostly fast, now and then descheduled for milliseconds).
struct EmpiricalSpread {
  std::vector<double> upper;                // bin k holds fitted E up to upper[k]; the last bin the rest
  std::vector<std::vector<double>> ratios;  // per bin
  bool empty() const { return ratios.empty(); }
  double draw(double fitted_us, std::mt19937_64& rng) const;
};

// From (fitted, measured) pairs; at most `bins` bins of at least `min_per_bin` items (fewer
// items give fewer bins). Pairs with a fitted value <= 0 or a non-finite one are left out.
EmpiricalSpread make_spread(std::vector<std::pair<double, double>> fitted_measured, std::size_t bins = 10,
                            std::size_t min_per_bin = 50);

// The CPU the rest of the process needs beside the workers, and the cores they all share. A run
// of W busy workers costs, per item, the worker's own E plus `other_per_item` x E on the consumer
// and publisher threads (the run's summary.json gives it: process_cpu_us_per_item /
// worker_cpu_us_per_item - 1). W x (1 + other) cores are wanted; when that is more than `cores`
// the scheduler shares them and every thread runs (W x (1 + other)) / cores times slower (work is
// conserved: the run then takes the CPU it needs over the cores it has). The fit itself was made
// under its own run's share, so a prediction scales by the target's stretch over the fit's.
struct CpuShare {
  double cores = 0;           // 0: no contention modelled
  double other_per_item = 0;  // consumer + publishers' CPU per item, as a multiple of the worker's
  int fitted_workers = 1;     // the workers of the run the fit was made on
  // How much slower each thread runs with `workers` busy workers: max(1, demand / cores).
  double stretch(int workers) const;
  // The target's stretch over the fitted run's (1 when off).
  double relative(int workers) const { return stretch(workers) / stretch(fitted_workers); }
};

struct ClosedBatchConfig {
  int workers = 1;
  std::size_t batch = 10;
  bool prefetch = true;
  std::size_t max_in_flight = 0;  // items received but not settled; 0 = 4 x batch, as the worker
  std::uint64_t seed = 1;
  // With a spread, the run is simulated this many times (seeds seed, seed+1, ...): the total is
  // their mean and the percentiles are over all their cycles, so that the draws' own noise (a
  // few descheduled items move a short run's total by 10%) does not pass for the model's error.
  std::size_t replications = 1;
  // The spread of a fitted run, multiplied into each item's fitted E: plain items draw from the
  // first, turnover items (prefetch off) from the second (the first when it is empty). Both
  // empty: E exactly as fitted.
  EmpiricalSpread spread, turnover_spread;
  CpuShare cpu;  // off by default
};

struct ClosedBatchResult {
  double total_s = 0;              // mean over the replications
  Percentiles cycle_us;            // over every replication's cycles
  std::vector<double> cycles_us;   // per item, in the order given (the first replication)
  std::size_t batches = 0;
  std::vector<std::size_t> items_per_worker;
  double cpu_stretch = 1;  // the factor every item's E was multiplied by (CpuShare::relative)
};

// Throws CostError on an empty item list, workers < 1, batch < 1, a fit index out of range, or a
// CPU share with negative or non-finite cores or other CPU.
ClosedBatchResult simulate_closed_batch(const std::vector<ClosedBatchItem>& items, const std::vector<EBatch>& fits,
                                        const ClosedBatchConfig& config);

}  // namespace overhead::cost
