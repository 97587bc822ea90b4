// The per-request stage chain of `overhead simulate` (simulator.hpp) built from what was asked:
// the arrivals (drawn at a rate, gamma bursts, or replayed times), the CPU workers with E, the GPU
// slots with D at the batch they find (service_times.hpp), and the pipeline's parts around the
// workers (the input queue, the publisher pool, the consumer), each off unless asked for. The
// command checks its flags and fills a ChainSpec; the chain itself is assembled here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cost/scenario.hpp"
#include "cost/simulator.hpp"

namespace overhead::cost {

struct ChainSpec {
  double rate = 0, burst_cv = 0;          // burst_cv > 0: gamma gaps at that CV, else Poisson
  bool replay = false;                    // the arrivals are `replayed` (then rate and CV are not used)
  std::vector<double> replayed;
  std::size_t requests = 0;
  std::uint64_t seed = 1;
  std::vector<SimRequest> workload;
  int workers = 1;
  ELinear e;
  bool e_exponential = false, d_exponential = false;
  int gpu_slots = 1;                      // the GPU stage's servers (gpu_slots_for: the fleet's)
  InputQueueSpec input;                   // off: batch 1, no round trips
  int publishers = 0;                     // 0: no publisher pool
  std::size_t publish_capacity = 0;       // 0: 2 x publishers
  double publish_s = 0;
  ConsumerSpec consumer;                  // consumers 0: none
};

// The GPU slots of a scenario's fleet: the sequences of the workload's mean request that fit a
// replica, times the replicas.
int gpu_slots_for(const Scenario& scenario, const std::vector<SimRequest>& workload);

// The chain's config: stages "cpu" and "gpu", the pipeline's parts as the spec sets them.
SimConfig chain_config(ChainSpec spec, const Scenario& scenario);

// The input queue's receive and delete when the flags give neither: half the turnover term of
// the E fit (a delete and a receive paid in line, as the closed-batch replay splits it), in
// seconds, from `fits_file`'s fit of the case for `tokenizer` (the case's first when not held).
// `chosen` is set to the tokenizer whose fit was read.
double half_turnover_s(const std::string& fits_file, int case_number, const std::string& tokenizer, std::string& chosen);

}  // namespace overhead::cost
