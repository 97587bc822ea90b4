// The capacity simulator behind `overhead simulate`: requests arrive (Poisson at a rate, or gamma
// bursts with a stated CV, seeded),
// pass through a chain of FIFO stages (the CPU workers with E(x), then the GPU slots with D(y|x)
// at the batch size they find), with an unbounded queue in front of each stage. It reports
// throughput, per-stage utilisation and waits, end-to-end latency percentiles, and which stage
// saturates. Service times are callbacks so the CLI can plug in fits and profiles and the tests
// can plug in exponential service for analytic checks.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cost/cost_model.hpp"

namespace overhead::cost {

struct SimRequest {
  double input_tokens = 0, output_tokens = 0;
};

// Seconds of service for one request. `batch` is the number of this stage's servers that are busy
// when the request starts, itself included (the GPU's running batch under continuous batching).
using ServiceTime = std::function<double(const SimRequest&, double batch, std::mt19937_64& rng)>;

struct StageSpec {
  std::string name;
  int servers = 1;
  ServiceTime service_s;
};

// How requests arrive: Poisson (exponential gaps), or bursts as gamma-distributed gaps with a
// stated coefficient of variation (CV > 1 clusters arrivals; CV = 1 is Poisson in distribution).
enum class Arrivals { poisson, gamma };

struct SimConfig {
  double arrival_rate = 1;           // requests per second (the mean, whichever process)
  Arrivals arrivals = Arrivals::poisson;
  double arrival_cv = 1;             // with gamma: the gaps' standard deviation / mean, > 0
  std::size_t requests = 100000;     // simulated requests
  std::uint64_t seed = 1;
  std::vector<SimRequest> workload;  // token counts, used in turn (cycled)
  std::vector<StageSpec> stages;     // in order; at least one
  std::size_t depth_samples = 50;    // instants at which each stage's queue depth is recorded
};

struct StageResult {
  std::string name;
  int servers = 0;
  Percentiles wait_s, service_s;  // wait: time in this stage's queue
  double utilization = 0;         // busy server-seconds / (servers x simulated span)
  double offered_load = 0;        // arrival rate into the stage x mean service / servers
  double mean_batch = 0;          // mean busy servers seen at the start of service
  double mean_queue_length = 0;   // time-average requests waiting for this stage
  std::size_t max_queue_length = 0;
  bool saturated = false;         // offered load >= 1: the queue grows without bound
  std::vector<double> depth;      // requests waiting for this stage at each SimResult::depth_times
};

struct SimResult {
  std::size_t requests = 0;
  double arrival_rate = 0, arrival_cv = 0;  // measured on the drawn gaps
  double span_s = 0;              // first arrival to last departure
  double throughput_per_s = 0;    // completed requests / span
  std::vector<StageResult> stages;
  Percentiles queue_wait_s;       // all queue waits of a request, summed
  Percentiles latency_s;          // arrival to departure
  double mean_in_system = 0;      // time-average requests in the system (for Little's law)
  std::string saturated_stage;    // the first stage whose offered load is >= 1; empty if none
  std::string bottleneck_stage;   // the stage with the highest offered load
  std::vector<double> depth_times;  // SimConfig::depth_samples instants spread over the span
};

// Runs the simulation. Deterministic for a given config (seed included) on one standard library.
// Throws CostError on a config that cannot run (no stages, rate <= 0, no servers, empty workload).
SimResult simulate(const SimConfig& config);

}  // namespace overhead::cost
