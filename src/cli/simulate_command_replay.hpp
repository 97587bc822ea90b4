// `overhead simulate --replay SRC`: the closed-batch mode of the simulator (cost/closed_batch.hpp).
// SRC is a record store URL (with --experiment) or a timeline CSV (cost/timeline.hpp). The run's
// items, in queue order with their token counts, are replayed through W workers taking batches of
// B with prefetch on or off, each item costing E from a fits.json (not its measured duration);
// the prediction is printed beside the run's measured total and cycle percentiles.
#pragma once

#include <cstdint>
#include <string>

namespace overhead::cli {

struct ReplayOptions {
  std::string source, experiment, fits, residuals, residuals_experiment, write_timeline, prefetch = "on";
  int case_number = 5;
  int workers = 0;          // 0: the replayed run's
  std::size_t batch = 0;    // 0: the replayed run's
  std::size_t max_in_flight = 0;
  std::uint64_t seed = 1;
  std::size_t replications = 20;  // with --residuals
  // The CPU share (cost/closed_batch.hpp CpuShare): cores of the machine the prediction is for
  // (0: this machine's), the consumer's and publishers' CPU per item as a multiple of the
  // worker's, and the workers of the fitted run (0: the --residuals run's, else 1).
  double cores = 0, other_cpu = 0;
  int fitted_workers = 0;
  bool json = false;
  bool measured_only = false;  // print the run's measured figures only (no fit needed)
};

// Exit code: 0 ok, 1 failure (message on stderr).
int run_simulate_replay(const ReplayOptions& o);

}  // namespace overhead::cli
