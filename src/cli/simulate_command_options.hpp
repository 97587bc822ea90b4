// What `overhead simulate` was asked (simulate_command.cpp parses it into this): the deployment, the
// workload, --max-rate's targets and the requests and seed live in `pricing`, the cost family's one
// struct; the rest is the simulator's own. The printing (simulate_command_print.hpp) reads it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cost/pricing.hpp"

namespace overhead::cli {

struct SimulateOptions {
  cost::PricingOptions pricing;
  std::vector<std::string> fits;
  std::string backend, tokenizer, workload_tokenizer = "llama-3.3-70b-instruct", e_us, e_dist = "fixed", d_dist = "fixed";
  int case_number = 5, workers = 1, gpu_slots = 0;
  double rate = 0, burst_cv = 0, target_p99_ms = 0, concurrency = 0;
  std::size_t offline = 0;  // --offline N: N clients and N requests, all sent at 0
  bool in_step = false;     // --in-step: the closed loop's clients start together
  bool max_rate() const { return pricing.load.mode == cost::Load::max_rate; }
  const cost::LatencyTargets& targets() const { return pricing.load.targets; }
  std::size_t requests() const { return pricing.load.requests; }
  std::uint64_t seed() const { return pricing.load.seed; }
  bool json = false;
  std::string plots;  // --plots DIR: the run's figures as SVG
  // Arrivals replayed from a store's records.
  std::string replay_arrivals, experiment, arrival_stamp = "auto";
  double speedup = 1;
  // The input queue (off unless --batch), the publisher pool (off unless --publishers) and the
  // consumer (off unless --consumers or --store-write-ms). A negative time: from the fit or 0.
  std::size_t batch = 0;
  std::string prefetch = "on";
  double receive_ms = -1, delete_ms = -1;
  int publishers = 0, consumers = 0;
  std::size_t publish_capacity = 0, consumer_batch = 200;
  double publish_ms = 0, linger_ms = 5;
  std::string store_write_ms;
};

}  // namespace overhead::cli
