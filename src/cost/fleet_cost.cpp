#include "cost/fleet_cost.hpp"

namespace overhead::cost {

FleetCost fleet_cost(const Scenario& sc, int gpus, int workers, double requests_per_s) {
  FleetCost c;
  c.gpu_usd_per_hour = sc.gpu_usd_per_hour;
  c.cpu_usd_per_hour = sc.cpu_usd_per_hour;
  c.usd_per_hour = gpus * c.gpu_usd_per_hour + workers * c.cpu_usd_per_hour;
  c.usd_per_request = requests_per_s > 0 ? c.usd_per_hour / 3600.0 / requests_per_s : 0;
  return c;
}

TokenPrices token_prices(const FleetCost& c, const std::vector<SimRequest>& workload) {
  double mean_in = 0, mean_out = 0;
  for (const auto& q : workload) {
    mean_in += q.input_tokens;
    mean_out += q.output_tokens;
  }
  mean_in /= static_cast<double>(workload.size());
  mean_out /= static_cast<double>(workload.size());
  TokenPrices p;
  p.usd_per_1m_output = mean_out > 0 ? c.usd_per_request / mean_out * 1e6 : 0;
  p.usd_per_1m_blended = mean_in + mean_out > 0 ? c.usd_per_request / (mean_in + mean_out) * 1e6 : 0;
  return p;
}

}  // namespace overhead::cost
