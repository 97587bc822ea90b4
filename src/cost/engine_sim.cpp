#include "cost/engine_sim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cost/engine_replica.hpp"
#include "cost/engine_source.hpp"
#include "cost/engine_tally.hpp"
#include "cost/event_queue.hpp"
#include "cost/sim_statistics.hpp"

namespace overhead::cost {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Refuses a config that cannot run, naming what is wrong; a request whose KV cannot fit is
// refused by concurrency_limit.
void check_config(const EngineSimConfig& c) {
  if (c.replicas < 1) throw CostError("simulate: at least one replica");
  if (c.workload.empty()) throw CostError("simulate: the workload has no requests");
  if (c.requests == 0) throw CostError("simulate: the number of requests must be > 0");
  if (!c.closed_loop && !(c.arrival_rate > 0 && std::isfinite(c.arrival_rate)))
    throw CostError("simulate: the arrival rate must be > 0");
  if (c.closed_loop && !(c.concurrency >= 1)) throw CostError("simulate: the concurrency must be at least 1");
  if (c.arrivals == Arrivals::gamma && !(c.arrival_cv > 0)) throw CostError("simulate: the burst CV must be > 0");
  if (c.workers > 0 && !c.cpu) throw CostError("simulate: the CPU workers need a service time");
  for (const auto& q : c.workload) concurrency_limit(c.replica, q.input_tokens + std::max(1.0, q.output_tokens));
}

// The replicas' steps until every request completed: each replica's next boundary (or the
// wake-up of an idle one) is an event.
void run_steps(const EngineSimConfig& c, EngineSource& source, std::vector<EngineReplica>& replicas, EngineTally& tally) {
  const Roofline& model = c.replica;
  const double kv_tokens = kv_capacity_tokens(model);
  EventQueue<std::size_t> events;
  std::vector<bool> sleeping(replicas.size(), false);
  std::size_t asleep = 0;
  for (std::size_t k = 0; k < replicas.size(); ++k) events.push({0.0, k});
  while (!tally.done() && !events.empty()) {
    const auto [t, k] = events.top();
    events.pop();
    if (t == kNever) break;
    EngineReplica& rep = replicas[k];
    rep.make_room(kv_tokens, t);
    rep.admit(source, t, kv_tokens, tally);
    double up = 0;
    if (rep.idle()) {
      // Idle: wake at the next ready request, or when a completion elsewhere sends one.
      if (source.peek(up)) events.push({std::max(up, t), k});
      else if (!sleeping[k]) {
        sleeping[k] = true;
        ++asleep;
      }
      continue;
    }
    const double end = rep.step(model, t, source, tally);
    events.push({end, k});
    if (c.closed_loop) source.release(tally.steps, end);
    // A closed loop's completions sent new requests: wake the idle replicas.
    if (asleep > 0 && source.peek(up))
      for (std::size_t j = 0; j < replicas.size(); ++j)
        if (sleeping[j]) {
          sleeping[j] = false;
          --asleep;
          events.push({std::max(up, t), j});
        }
  }
}

// An offline benchmark: a closed loop with a client for every request, all sent at 0.
bool offline(const EngineSimConfig& c) { return c.closed_loop && c.concurrency >= static_cast<double>(c.requests); }

// The run's own figures: throughput, the fleet's rates over the middle 80% of completions, the
// latency percentiles.
void run_figures(const EngineSimConfig& c, const EngineTally& tally, SimResult& r) {
  r.requests = tally.completions();
  r.span_s = tally.last_completion();
  r.throughput_per_s = r.span_s > 0 ? static_cast<double>(r.requests) / r.span_s : 0;
  const double window_s = tally.window_s();
  r.total_output_tokens_per_s = r.span_s > 0 ? tally.all_tokens() / r.span_s : 0;
  if (offline(c)) {
    // Every request in flight from the start: the run has no steady middle (its completions
    // bunch at the end of equal requests), and the benchmark's own figure is every output token
    // over the whole span, start and drain included.
    r.requests_per_s = r.throughput_per_s;
    r.output_tokens_per_s = r.total_output_tokens_per_s;
  } else if (tally.window_done() > 0 && window_s > 0) {
    r.requests_per_s = static_cast<double>(tally.window_done()) / window_s;
    r.output_tokens_per_s = tally.window_tokens() / window_s;
  } else {
    r.requests_per_s = r.throughput_per_s;
    double out = 0;
    for (const auto& q : c.workload) out += q.output_tokens;
    r.output_tokens_per_s = r.requests_per_s * out / static_cast<double>(c.workload.size());
  }
  r.arrival_rate = c.closed_loop ? r.throughput_per_s : c.arrival_rate;
  r.arrival_cv = c.arrivals == Arrivals::gamma ? c.arrival_cv : 1;
  r.ttft_s = tally.ttft.percentiles();
  r.tpot_s = tally.tpot.percentiles();
  r.itl_s = tally.itl.percentiles();
  r.latency_s = tally.latency.percentiles();
  r.queue_wait_s = tally.queue_wait.percentiles();
  r.steps = tally.steps;
  r.depth_times = depth_instants(r.span_s, c.depth_samples);
}

// The CPU workers' stage.
StageResult cpu_stage(const EngineSimConfig& c, const CpuTally& cpu, const SimResult& r) {
  StageResult s;
  s.name = "cpu";
  s.servers = c.workers;
  s.wait_s = cpu.wait.percentiles();
  s.service_s = cpu.service.percentiles();
  const double mean_e = s.service_s.mean;
  s.utilization = r.span_s > 0 ? cpu.busy / (c.workers * r.span_s) : 0;
  s.offered_load = r.arrival_rate * mean_e / c.workers;
  s.saturated = s.offered_load >= 1;
  s.mean_batch = s.utilization * c.workers;
  s.mean_queue_length = r.span_s > 0 ? cpu.wait_sum / r.span_s : 0;
  s.max_queue_length = cpu.depth.max();
  for (const double t : r.depth_times) s.depth.push_back(cpu.depth.at(t));
  return s;
}

// The GPU replicas' stage.
StageResult gpu_stage(const EngineSimConfig& c, const std::vector<EngineReplica>& replicas, const EngineTally& tally,
                      const SimResult& r) {
  StageResult s;
  s.name = "gpu";
  s.servers = c.replicas;
  s.wait_s = tally.gpu_wait.percentiles();
  s.service_s = tally.gpu_service.percentiles();
  double busy = 0, batch_time = 0;
  for (const auto& rep : replicas) {
    busy += rep.busy_s();
    batch_time += rep.batch_time();
  }
  s.utilization = r.span_s > 0 ? busy / (c.replicas * r.span_s) : 0;
  s.mean_batch = busy > 0 ? batch_time / busy : 0;
  // Offered load: the arrival rate over the fleet's capacity in the steady state `cost` prices
  // (the workload's length mix).
  const LengthMix mix = workload_mix(c.replica, c.workload);
  const auto full = steady_state(c.replica, concurrency_limit(c.replica, mix.held_tokens), mix, true);
  s.offered_load = (c.closed_loop ? r.requests_per_s : r.arrival_rate) / (full.requests_per_s * c.replicas);
  s.saturated = !c.closed_loop && s.offered_load >= 1;
  s.mean_queue_length = r.span_s > 0 ? tally.gpu_wait_sum / r.span_s : 0;
  s.max_queue_length = tally.gpu_depth.max();
  for (const double t : r.depth_times) s.depth.push_back(tally.gpu_depth.at(t));
  return s;
}

}  // namespace

LengthMix workload_mix(const Roofline& replica, const std::vector<SimRequest>& workload) {
  std::vector<double> in, out;
  in.reserve(workload.size());
  out.reserve(workload.size());
  for (const auto& q : workload) {
    in.push_back(q.input_tokens);
    out.push_back(q.output_tokens);
  }
  return length_mix(replica, in, out);
}

SimResult simulate_engine(const EngineSimConfig& c) {
  check_config(c);
  const auto cap = static_cast<std::size_t>(std::max(1.0, c.replica.max_concurrency));
  std::mt19937_64 rng(c.seed);
  EngineSource source(c, rng);
  std::vector<EngineReplica> replicas(static_cast<std::size_t>(c.replicas), EngineReplica(std::min<std::size_t>(cap, 1u << 16),
                                           static_cast<std::uint64_t>(std::max(1.0, c.replica.scheduler_steps)),
                                                                                  c.replica.output_reserved,
                                                                                  c.replica.decodes_share_budget ? c.replica.prefill_chunk_tokens : 0,
                                                                                  AdaptiveReserve{c.replica.reserve_adapts, c.replica.reserve_floor,
                                                                                                  c.replica.reserve_decay, c.replica.retract_headroom_steps}));
  EngineTally tally(c.requests);
  run_steps(c, source, replicas, tally);

  SimResult r;
  run_figures(c, tally, r);
  if (c.workers > 0) r.stages.push_back(cpu_stage(c, source.cpu, r));
  r.stages.push_back(gpu_stage(c, replicas, tally, r));
  r.mean_batch = r.stages.back().mean_batch;
  r.mean_in_system = r.span_s > 0 ? r.latency_s.mean * static_cast<double>(r.requests) / r.span_s : 0;
  name_bottleneck(r);
  return r;
}

}  // namespace overhead::cost
