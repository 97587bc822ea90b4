// What every simulation in cost/ speaks: a request's token counts, a stage's service time, how
// requests arrive, and the results (per stage and for the run) that `overhead simulate` prints. The
// per-request stage chain (simulator.hpp) and the engine's step simulation (engine_sim.hpp) fill
// the same SimResult, so the printing, the plots and the planners read either.
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
// Or replayed: the times given in SimConfig::arrival_times (a measured run's).
enum class Arrivals { poisson, gamma, replay };

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
  bool request_path = true;       // false for the record's branch (publish, consumer)
  // The workers with the publish stage: time a worker was held by the full pool after E, per
  // request, and as a share of the workers' time (utilization counts E only).
  Percentiles blocked_s;
  double blocked_share = 0;
  // The workers with the input queue: the share of their time spent in receives and deletes on
  // their own thread (prefetch off; with prefetch a second thread pays them).
  double io_share = 0;
  // Batches: receives of the input queue (the workers), store writes (the consumer); 0 if none.
  std::size_t rounds = 0;
  double mean_round_size = 0;
};

struct SimResult {
  std::size_t requests = 0;
  double arrival_rate = 0, arrival_cv = 0;  // measured on the gaps (0 when all arrive at one instant)
  double span_s = 0;              // time 0 to the last departure (or the last record stored)
  double throughput_per_s = 0;    // completed requests / span
  std::vector<StageResult> stages;
  Percentiles queue_wait_s;       // all queue waits of a request, summed
  Percentiles latency_s;          // arrival to departure
  Percentiles stored_latency_s;   // arrival to the record stored (with the consumer stage), else 0
  double mean_in_system = 0;      // time-average requests in the system (for Little's law)
  std::string saturated_stage;    // the first stage whose offered load is >= 1; empty if none
  std::string bottleneck_stage;   // the stage with the highest offered load
  std::vector<double> depth_times;  // SimConfig::depth_samples instants spread over the span
  // The engine simulation (engine_sim.hpp) only: time to first token (from arrival, E included)
  // and time per output token after it; the fleet's rates over the middle 80% of completions
  // (the start and the drain left out), or, for an offline run (every request sent at 0), over
  // the whole span.
  Percentiles ttft_s, tpot_s;
  Percentiles itl_s;  // inter-token latency, one value per token after a sequence's first
  double requests_per_s = 0, output_tokens_per_s = 0;
  double total_output_tokens_per_s = 0;  // every output token over the whole span (an offline run's figure)
  double mean_batch = 0;            // running sequences per replica, time-averaged over its steps
  std::uint64_t steps = 0;
};

}  // namespace overhead::cost
