// The step-by-step simulation behind `overhead simulate --rate/--concurrency`: requests arrive
// (Poisson, gamma bursts, or a closed loop of clients), pass the CPU workers' E(x) in FIFO order,
// wait in one queue for the GPU replicas, and run on a continuous-batching engine per replica
// whose every step takes step_seconds() of the same server model `cost` uses (roofline.hpp):
// sequences join at a step boundary when a slot and their KV fit, prefill in chunks of the
// engine's budget, emit their first token at the end of their last prefill step and one token
// per step after it, and leave at the boundary after their last token.
//
// Memory does not grow with the number of requests: arrivals are drawn when the engine needs the
// next one (the queues are implicit in the arrival stream), only running sequences are held, and
// percentiles come from LatencySketch (0.5% relative error). Queue depth over time is kept on a
// time grid that coarsens as the run grows (4,096 instants at most).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "cost/roofline.hpp"
#include "cost/simulator.hpp"

namespace overhead::cost {

struct EngineSimConfig {
  Roofline replica;
  int replicas = 1;
  Arrivals arrivals = Arrivals::poisson;  // poisson or gamma; ignored with closed_loop
  double arrival_rate = 1, arrival_cv = 1;
  bool closed_loop = false;
  double concurrency = 1;                 // with closed_loop: clients, each with one request in flight;
                                          // at least `requests`: all arrive at 0 (an offline benchmark)
  // With closed_loop: every client sends its first request at 0, as a fixed-batch benchmark does,
  // instead of joining at the steady state's pace; on equal requests they then stay in step, their
  // prompts meeting every cycle.
  bool clients_in_step = false;
  std::size_t requests = 100000;
  std::uint64_t seed = 1;
  std::vector<SimRequest> workload;       // used in turn
  int workers = 0;                        // CPU workers in front (0: none)
  ServiceTime cpu;                        // E of one request (batch argument 1)
  std::size_t depth_samples = 50;
};

// SimResult with stages "cpu" (when workers > 0) and "gpu" (servers = replicas), and ttft_s,
// tpot_s, requests_per_s and output_tokens_per_s filled. Throws CostError on a config that cannot
// run, or a request whose KV cannot fit (concurrency_limit's message).
SimResult simulate_engine(const EngineSimConfig& config);

// The workload's lengths as the steady state takes them (length_mix over its requests): what the
// simulation's offered load and `cost`'s capacity are measured against.
LengthMix workload_mix(const Roofline& replica, const std::vector<SimRequest>& workload);

}  // namespace overhead::cost
