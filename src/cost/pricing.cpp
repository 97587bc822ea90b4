#include "cost/pricing.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

#include "cost/service_times.hpp"

namespace overhead::cost {

bool LatencyTargets::met_by(const SimResult& r) const {
  return (ttft_p99_ms <= 0 || r.ttft_s.p99 * 1000 <= ttft_p99_ms) && (tpot_p99_ms <= 0 || r.tpot_s.p99 * 1000 <= tpot_p99_ms);
}

const char* load_name(Load mode) {
  switch (mode) {
    case Load::max_throughput: return "max_throughput";
    case Load::concurrency: return "concurrency";
    case Load::max_rate: return "max_rate";
    case Load::rate: return "rate";
    case Load::offline: return "offline";
    case Load::utilization: break;
  }
  return "utilization";
}

namespace {

// The fleet's requests/s with every replica at the most sequences that fit (at most `replica_cap`).
double fleet_capacity(const Roofline& replica, int replicas, const std::vector<SimRequest>& w,
                      const std::optional<double>& replica_cap) {
  const LengthMix m = workload_mix(replica, w);
  const double steady = steady_state(replica, concurrency_limit(replica, m.held_tokens), m, true).requests_per_s;
  return (replica_cap ? std::min(*replica_cap, steady) : steady) * replicas;
}

// An engine that reserves less than its requests' output (vLLM V1) admits past what its KV holds
// at their end and, when the cache is full, preempts and computes the preempted again: work the
// steady state does not count. Where its KV, not its batch cap, bounds the batch, one replica's
// capacity is a saturated closed loop of the step simulation (twice the sequences that fit), as
// `simulate` runs it; elsewhere the steady state's stands.
std::optional<double> preempting_capacity(const Scenario& s, const Workload& w, const ELinear& e, std::uint64_t seed) {
  const Roofline& r = s.replica;
  if (r.output_reserved >= 1) return std::nullopt;
  const LengthMix m = length_mix(r, w.input_tokens, w.output_tokens);
  const double limit = concurrency_limit(r, m.held_tokens);
  if (limit >= r.max_concurrency) return std::nullopt;
  auto c = engine_sim_config(s, w, e, 0, 20000, seed);
  c.closed_loop = true;
  c.concurrency = 2 * limit * s.replicas;
  return simulate_engine(c).requests_per_s / s.replicas;
}

}  // namespace

MaxRate find_max_rate(EngineSimConfig c, const LatencyTargets& targets) {
  if (!targets.any()) throw CostError("--max-rate needs --ttft-p99-ms and/or --tpot-p99-ms");
  if (c.workload.empty()) throw CostError("--max-rate needs a workload");
  c.closed_loop = false;
  c.arrivals = Arrivals::poisson;
  MaxRate m;
  double lo = 0, hi = fleet_capacity(c.replica, c.replicas, c.workload, std::nullopt);
  for (int i = 0; i < 14; ++i) {
    c.arrival_rate = (lo + hi) / 2;
    const auto r = simulate_engine(c);
    ++m.simulations;
    if (targets.met_by(r)) {
      lo = c.arrival_rate;
      m.at = r;
      m.met = true;
    } else {
      hi = c.arrival_rate;
    }
  }
  m.rate = lo;
  return m;
}

ApiPrice api_price(const std::string& name_or_pair, const Prices& prices, bool* preset) {
  const auto found = prices.apis.find(name_or_pair);
  if (preset) *preset = found != prices.apis.end();
  if (found != prices.apis.end()) return found->second;
  ApiPrice typed;
  std::tie(typed.usd_per_1m_input, typed.usd_per_1m_output) = parse_number_pair(name_or_pair, "--api-price");
  return typed;
}

EngineSimConfig engine_sim_config(const Scenario& s, const Workload& w, const ELinear& e, int workers,
                                  std::size_t requests, std::uint64_t seed) {
  std::vector<SimRequest> workload;
  for (std::size_t i = 0; i < w.input_tokens.size(); ++i) workload.push_back({w.input_tokens[i], w.output_tokens[i]});
  return engine_sim_config(s, std::move(workload), cpu_service(e, false), workers, requests, seed);
}

EngineSimConfig engine_sim_config(const Scenario& s, std::vector<SimRequest> workload, ServiceTime cpu, int workers,
                                  std::size_t requests, std::uint64_t seed) {
  EngineSimConfig c;
  c.replica = s.replica;
  c.replicas = s.replicas;
  c.requests = requests;
  c.seed = seed;
  c.workload = std::move(workload);
  c.workers = workers;
  c.cpu = std::move(cpu);
  return c;
}

PricedLoad price_load(const Scenario& s, const LoadSpec& load, const ELinear& e, const Workload& w) {
  PricedLoad p;
  CostInputs& in = p.inputs;
  in.gpu = s.replica;
  in.replicas = s.replicas;
  in.serving = s.serving;
  in.e = e;
  in.gpu_usd_per_hour = s.gpu_usd_per_hour;
  in.cpu_usd_per_hour = s.cpu_usd_per_hour;
  in.utilization = load.utilization;
  in.replica_capacity_requests_per_s = preempting_capacity(s, w, e, load.seed);
  switch (load.mode) {
    case Load::utilization: break;
    case Load::max_throughput: in.mode = LoadMode::max_throughput; break;
    case Load::concurrency:
      in.mode = LoadMode::concurrency;
      in.concurrency = load.concurrency;
      if (load.in_step) {
        auto c = engine_sim_config(s, w, e, 0, static_cast<std::size_t>(std::max(2000.0, 20 * load.concurrency)), load.seed);
        c.closed_loop = true;
        c.clients_in_step = true;
        c.concurrency = load.concurrency;
        const SimResult run = simulate_engine(c);
        const double capacity = fleet_capacity(s.replica, s.replicas, c.workload, in.replica_capacity_requests_per_s);
        in.mode = LoadMode::utilization;
        in.utilization = std::clamp(run.requests_per_s / capacity, 1e-9, 1.0);
        p.offline_run = run;
      }
      break;
    case Load::rate: {
      // Poisson arrivals at a random instant: the open-loop steady state at that share of capacity.
      const double capacity = fleet_capacity(s.replica, s.replicas, engine_sim_config(s, w, e, 0, 1, 1).workload, in.replica_capacity_requests_per_s);
      if (!(load.rate > 0)) throw CostError("--rate must be > 0 requests/s");
      if (load.rate > capacity * (1 + 1e-12))
        throw CostError("--rate " + std::to_string(load.rate) + " requests/s is above the fleet's capacity of " +
                        std::to_string(capacity) + " (the queue would grow without bound)");
      in.utilization = std::min(1.0, load.rate / capacity);
      break;
    }
    case Load::offline: {
      auto c = engine_sim_config(s, w, e, 0, load.requests, load.seed);
      c.closed_loop = true;
      c.concurrency = static_cast<double>(load.requests);
      const SimResult run = simulate_engine(c);
      const double capacity = fleet_capacity(s.replica, s.replicas, c.workload, in.replica_capacity_requests_per_s);
      in.utilization = std::clamp(run.requests_per_s / capacity, 1e-9, 1.0);
      p.offline_run = run;
      break;
    }
    case Load::max_rate: {
      // Enough workers that E never queues: the fleet's capacity times the largest E, plus one.
      auto c = engine_sim_config(s, w, e, 1, load.requests, load.seed);
      const double capacity = fleet_capacity(s.replica, s.replicas, c.workload, in.replica_capacity_requests_per_s);
      double e_max = 0;
      for (double x : w.input_tokens) e_max = std::max(e_max, e.at(x) / 1e6);
      c.workers = 1 + static_cast<int>(std::ceil(std::min(1e6, capacity * e_max)));
      p.max_rate = find_max_rate(c, load.targets);
      if (!p.max_rate->met)
        throw CostError("no rate meets TTFT p99 <= " + std::to_string(load.targets.ttft_p99_ms) + " ms and TPOT p99 <= " +
                        std::to_string(load.targets.tpot_p99_ms) + " ms");
      in.utilization = std::clamp(p.max_rate->rate / capacity, 1e-9, 1.0);
      break;
    }
  }
  return p;
}

}  // namespace overhead::cost
