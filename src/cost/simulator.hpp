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
#include "cost/sim_result.hpp"

namespace overhead::cost {

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

// Runs the simulation. Deterministic for a given config (seed included) on one standard library.
// Throws CostError on a config that cannot run (no stages, rate <= 0, no servers, empty workload,
// replayed times unsorted or negative, a consumer without publishers).
SimResult simulate(const SimConfig& config);

}  // namespace overhead::cost
