// What the cost family of commands is asked, in one struct each part reads (never copies): the
// deployment (ScenarioSpec), how the fleet is loaded when it is priced (LoadSpec: a utilization,
// its capacity, a concurrency, or the highest rate meeting latency targets), the workload and the
// API prices. `overhead cost`, `overhead simulate` and the report's cost section hold a
// PricingOptions; the pricing itself (a Scenario and a load into CostInputs, and the max-rate
// search that `cost` and `simulate` share) lives here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/cost_model.hpp"
#include "cost/engine_sim.hpp"
#include "cost/scenario.hpp"

namespace overhead::cost {

// MLPerf's server-scenario rule: a rate is served when the p99 of TTFT and of TPOT meet their
// targets (a target <= 0 is not checked).
struct LatencyTargets {
  double ttft_p99_ms = 0, tpot_p99_ms = 0;
  bool any() const { return ttft_p99_ms > 0 || tpot_p99_ms > 0; }
  bool met_by(const SimResult& r) const;
};

// The loads a benchmark states: a share of capacity, the capacity, C clients in a closed loop, a
// Poisson rate, every request at once (offline), or the highest rate meeting latency targets.
enum class Load { utilization, max_throughput, concurrency, rate, offline, max_rate };

struct LoadSpec {
  Load mode = Load::utilization;
  double utilization = 0.5;        // with utilization: share of the fleet's capacity, (0, 1]
  double concurrency = 0;          // with concurrency: requests in flight over the fleet
  double rate = 0;                 // with rate: Poisson arrivals over the fleet, requests/s
  bool in_step = false;            // with concurrency: the clients start together (simulated)
  LatencyTargets targets;          // with max_rate
  std::size_t requests = 100000;   // with max_rate: simulated requests per candidate rate; offline: the run
  std::uint64_t seed = 1;
};

// "utilization", "max_throughput", "concurrency", "rate", "offline" or "max_rate" (the --json mode field).
const char* load_name(Load mode);

struct PricingOptions {
  ScenarioSpec scenario;
  LoadSpec load;
  std::string workload = "in=200,out=400";
  std::vector<std::string> api_prices;  // preset names or IN,OUT pairs
};

// An API's $ per 1M input and output tokens (--api-price): the price table's preset of that name,
// or "IN,OUT" typed in (then its kind, source and date are empty). `preset`, when given, says which.
ApiPrice api_price(const std::string& name_or_pair, const Prices& prices, bool* preset = nullptr);

// The highest Poisson rate whose simulated TTFT and TPOT p99 meet the targets, by bisection
// between 0 and the fleet's steady-state capacity (14 halvings: 1/16384 of it). `c` gives the
// fleet, the workload, the workers and the requests per candidate; its rate is searched.
struct MaxRate {
  double rate = 0;
  SimResult at;  // the simulation at `rate`
  int simulations = 0;
  bool met = false;
};
MaxRate find_max_rate(EngineSimConfig c, const LatencyTargets& targets);

// The engine simulation of a scenario's fleet for a workload (replica, replicas, requests, seed,
// the workload in turn, and `workers` CPU workers with E; none when workers is 0).
EngineSimConfig engine_sim_config(const Scenario& s, const Workload& w, const ELinear& e, int workers,
                                  std::size_t requests, std::uint64_t seed);
// The same with the requests given as they are and E as a service time (service_times.hpp).
EngineSimConfig engine_sim_config(const Scenario& s, std::vector<SimRequest> workload, ServiceTime cpu, int workers,
                                  std::size_t requests, std::uint64_t seed);

// A scenario priced under a load: the replica, replicas, prices and E of the scenario, the
// operating point of the load. max_rate runs find_max_rate (with enough workers that E is never
// the bottleneck) and prices the fleet at the rate found, as the utilization rate / capacity.
// offline runs the simulation of `requests` all sent at 0 (every output token over the whole
// span, the benchmark's figure) and prices the fleet at the rate it completed them; its latencies
// are the run's (offline_run), not a steady state's.
// concurrency with in_step is simulated the same way (clients that start together stay in step on
// equal requests, which no steady state of drifted-apart clients prices): 20 x C requests, at least
// 2,000, the rates over the middle of the run.
struct PricedLoad {
  CostInputs inputs;
  std::optional<MaxRate> max_rate;
  std::optional<SimResult> offline_run;  // the simulated run (offline, or clients in step)
};
// Throws CostError when max_rate has no targets or no rate meets them, or a rate is above the
// fleet's capacity.
PricedLoad price_load(const Scenario& s, const LoadSpec& load, const ELinear& e, const Workload& w);

}  // namespace overhead::cost
