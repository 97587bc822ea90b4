#include "cost/capacity.hpp"

#include <algorithm>
#include <cmath>

namespace overhead::cost {

SimResult simulate_fleet(const CapacityQuery& q, int workers, int instances) {
  SimConfig c = q.traffic;
  c.stages.clear();
  c.stages.push_back({"cpu", workers, q.cpu});
  const GpuTime gpu = q.gpu;
  c.stages.push_back({"gpu", instances * q.gpu_slots, [gpu, instances](const SimRequest& r, double busy, std::mt19937_64& rng) {
                        return gpu(r, std::ceil(busy / instances), rng);
                      }});
  return simulate(c);
}

namespace {

bool meets(const SimResult& r, double target) { return r.saturated_stage.empty() && r.latency_s.p99 <= target; }

// The least n in [lo, limit] for which ok(n) holds, by doubling then bisection; ok is assumed
// monotone. Returns limit + 1 when none does.
template <typename Ok>
int least(int lo, int limit, Ok ok) {
  int hi = std::max(lo, 1);
  while (!ok(hi)) {
    if (hi >= limit) return limit + 1;
    lo = hi + 1;
    hi = std::min(limit, hi * 2);
  }
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (ok(mid)) hi = mid;
    else lo = mid + 1;
  }
  return hi;
}

}  // namespace

CapacityPlan plan_capacity(const CapacityQuery& q) {
  if (!(q.traffic.arrival_rate > 0)) throw CostError("capacity: --rate must be > 0");
  if (!(q.target_p99_s > 0)) throw CostError("capacity: --target-p99 must be > 0");
  if (q.traffic.workload.empty() || !q.cpu || !q.gpu || q.gpu_slots < 1) throw CostError("capacity: incomplete query");
  CapacityPlan plan;
  // Mean E and D of the workload, for the lower bounds: below rate x mean service per server the
  // queue grows without bound.
  std::mt19937_64 rng(q.traffic.seed);
  double e = 0, d = 0;
  for (const auto& r : q.traffic.workload) {
    e += q.cpu(r, 1, rng);
    d += q.gpu(r, q.gpu_slots, rng);
  }
  e /= static_cast<double>(q.traffic.workload.size());
  d /= static_cast<double>(q.traffic.workload.size());
  const int min_workers = std::max(1, static_cast<int>(std::floor(q.traffic.arrival_rate * e)) + 1);
  const int min_instances = std::max(1, static_cast<int>(std::floor(q.traffic.arrival_rate * d / q.gpu_slots)) + 1);
  // "Ample" workers while the instances are searched: enough that the CPU queue is negligible.
  const int ample = std::min(q.max_workers, 2 * min_workers + 16);

  auto run = [&](int w, int g) {
    ++plan.simulations;
    return simulate_fleet(q, w, g);
  };
  const int instances = least(min_instances, q.max_instances, [&](int g) { return meets(run(ample, g), q.target_p99_s); });
  if (instances > q.max_instances) {
    plan.reason = "no fleet of up to " + std::to_string(q.max_instances) + " GPU instances meets the target (with " +
                  std::to_string(ample) + " workers)";
    return plan;
  }
  int workers = least(min_workers, q.max_workers, [&](int w) { return meets(run(w, instances), q.target_p99_s); });
  if (workers > q.max_workers) {
    plan.reason = "no count of up to " + std::to_string(q.max_workers) + " workers meets the target";
    return plan;
  }
  plan.met = true;
  plan.workers = workers;
  plan.instances = instances;
  plan.result = run(workers, instances);
  return plan;
}

CapacityQuery capacity_query(const SimConfig& chain, double target_p99_s, int gpu_slots) {
  CapacityQuery q;
  q.traffic = chain;
  q.target_p99_s = target_p99_s;
  q.cpu = chain.stages.at(0).service_s;
  q.gpu = chain.stages.at(1).service_s;
  q.gpu_slots = gpu_slots;
  return q;
}

}  // namespace overhead::cost
