// Capacity planning (`overhead simulate --target-p99 MS --rate R`): the fewest GPU instances, and
// then the fewest CPU workers, whose simulated end-to-end p99 latency meets a target at an arrival
// rate. Each candidate is a run of the discrete-event simulator (cost/simulator.hpp). GPU
// instances come first because they cost far more than a worker: the instances are searched with
// ample workers, then the workers with those instances. The search assumes that more servers never
// make the p99 worse (true of FIFO queues fed by the same arrivals).
#pragma once

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cost/simulator.hpp"

namespace overhead::cost {

// Seconds of GPU time for a request when `batch` sequences run on its instance (itself included).
using GpuTime = std::function<double(const SimRequest&, double batch, std::mt19937_64& rng)>;

struct CapacityQuery {
  // The arrivals (rate, process, CV, requests, seed) and the workload every candidate sees: the
  // simulation's own config, read as it is; its stages are set per candidate.
  SimConfig traffic;
  double target_p99_s = 1;   // end-to-end
  ServiceTime cpu;           // one worker's E
  int gpu_slots = 1;         // concurrent sequences per instance
  GpuTime gpu;
  int max_workers = 1'000'000, max_instances = 100'000;
};

struct CapacityPlan {
  bool met = false;
  int workers = 0, instances = 0;
  SimResult result;          // the simulation at the plan
  int simulations = 0;       // candidates tried
  std::string reason;        // why not met (a limit reached)
};

// The simulation of `workers` CPU workers and `instances` GPU instances of `gpu_slots` each. The
// instances are one FIFO pool; a request's batch is the pool's busy slots spread over the
// instances (rounded up), as a balanced router keeps them.
SimResult simulate_fleet(const CapacityQuery& q, int workers, int instances);

CapacityPlan plan_capacity(const CapacityQuery& q);

// The query for a per-request chain (chain_config.hpp): its arrivals and workload, its first
// stage's E and its second's D, `gpu_slots` per instance.
CapacityQuery capacity_query(const SimConfig& chain, double target_p99_s, int gpu_slots);

}  // namespace overhead::cost
