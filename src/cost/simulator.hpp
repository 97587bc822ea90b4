// The capacity simulator behind `overhead simulate`: requests arrive (Poisson at a rate, gamma
// bursts with a stated CV, seeded, or at replayed times),
// pass through a chain of FIFO stages (the CPU workers with E(x), then the GPU slots with D(y|x)
// at the batch size they find), with an unbounded queue in front of each stage. It reports
// throughput, per-stage utilisation and waits, end-to-end latency percentiles, and which stage
// saturates. Service times are callbacks so the CLI can plug in fits and profiles and the tests
// can plug in exponential service for analytic checks.
//
// Optionally the first stage (the workers) also models the pipeline around it (all off by
// default, and then they cost nothing): the input queue's batch receive with its receive and
// delete round trips, and the record's path after E, the asynchronous publisher pool whose full
// queue blocks the worker (cost/worker_front.hpp) and the consumer that writes the records to the
// store in rounds (cost/consumer_stage.hpp). The record's path is a branch: the request goes on to
// the next stage when E ends; the publish and consumer stages are reported beside the chain's,
// marked as off the request's path, with the latency to the store as a figure of its own.
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

// The input queue in front of the workers (worker_front.hpp). Off (the default): a free worker
// takes the next request at once, one at a time.
struct InputQueueSpec {
  std::size_t batch = 1;            // messages per receive (a queue gives at most 10)
  double receive_s = 0, delete_s = 0;  // round trips of one receive and one batch delete
  bool prefetch = false;            // a second thread per worker receives ahead and deletes
  bool on() const { return batch > 1 || receive_s > 0 || delete_s > 0; }
};

// The asynchronous log publisher pool after E (worker_front.hpp). Off when publishers == 0.
struct PublishSpec {
  int publishers = 0;
  std::size_t capacity = 0;         // records waiting for a publisher thread; 0 = 2 x publishers
  ServiceTime publish_s;            // one record's publish (batch: 1)
};

// The consumer that stores the published records (consumer_stage.hpp). Off when consumers == 0;
// needs the publish stage. A round opens when a consumer is free and a record is waiting, takes
// what arrives within `linger_s` (up to `batch`) and writes it in write_s + write_per_record_s x
// records (one store transaction).
struct ConsumerSpec {
  int consumers = 0;
  std::size_t batch = 200;          // pipe/consumer.hpp's max_records_per_write
  double linger_s = 0.005;          // and its linger
  double write_s = 0, write_per_record_s = 0;
};

struct SimConfig {
  double arrival_rate = 1;           // requests per second (the mean, whichever process)
  Arrivals arrivals = Arrivals::poisson;
  double arrival_cv = 1;             // with gamma: the gaps' standard deviation / mean, > 0
  std::size_t requests = 100000;     // simulated requests (with replay: arrival_times.size())
  std::vector<double> arrival_times; // with replay: seconds, non-decreasing, >= 0
  std::uint64_t seed = 1;
  std::vector<SimRequest> workload;  // token counts, used in turn (cycled)
  std::vector<StageSpec> stages;     // in order; at least one
  std::size_t depth_samples = 50;    // instants at which each stage's queue depth is recorded
  InputQueueSpec input;              // around the first stage
  PublishSpec publish;
  ConsumerSpec consumer;
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
  // (the start and the drain left out).
  Percentiles ttft_s, tpot_s;
  double requests_per_s = 0, output_tokens_per_s = 0;
  double mean_batch = 0;            // running sequences per replica, time-averaged over its steps
  std::uint64_t steps = 0;
};

// Runs the simulation. Deterministic for a given config (seed included) on one standard library.
// Throws CostError on a config that cannot run (no stages, rate <= 0, no servers, empty workload,
// replayed times unsorted or negative, a consumer without publishers).
SimResult simulate(const SimConfig& config);

}  // namespace overhead::cost
