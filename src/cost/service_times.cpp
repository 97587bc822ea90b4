#include "cost/service_times.hpp"

#include <algorithm>
#include <cmath>
#include <random>

namespace overhead::cost {
namespace {

double around(double mean, bool exponential, std::mt19937_64& rng) {
  if (!exponential || mean <= 0) return mean;
  return std::exponential_distribution<double>(1.0 / mean)(rng);
}

}  // namespace

ServiceTime cpu_service(const ELinear& e, bool exponential) {
  return [e, exponential](const SimRequest& q, double, std::mt19937_64& rng) {
    return around(e.at(q.input_tokens) / 1e6, exponential, rng);
  };
}

ServiceTime gpu_slot_service(const Roofline& replica, int replicas, bool exponential) {
  return [replica, replicas, exponential](const SimRequest& q, double batch, std::mt19937_64& rng) {
    const double per_replica = std::max(1.0, std::ceil(batch / replicas));
    const auto s = steady_state(replica, per_replica, q.input_tokens, q.output_tokens, true);
    return around((s.prefill_steps + std::max(1.0, q.output_tokens) - 1) * s.step_s, exponential, rng);
  };
}

}  // namespace overhead::cost
