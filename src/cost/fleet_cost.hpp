// What a simulated fleet costs: $/hour of its GPUs and CPU workers at the scenario's prices, $ per
// request at the throughput it served, and $ per 1M tokens of its workload's mean request.
#pragma once

#include <vector>

#include "cost/scenario.hpp"
#include "cost/sim_result.hpp"

namespace overhead::cost {

struct FleetCost {
  double gpu_usd_per_hour = 0, cpu_usd_per_hour = 0, usd_per_hour = 0, usd_per_request = 0;
};

FleetCost fleet_cost(const Scenario& sc, int gpus, int workers, double requests_per_s);

// $ per 1M output tokens, and per 1M tokens in and out (blended), at the workload's mean request;
// 0 when it has no such tokens.
struct TokenPrices {
  double usd_per_1m_output = 0, usd_per_1m_blended = 0;
};
TokenPrices token_prices(const FleetCost& c, const std::vector<SimRequest>& workload);

}  // namespace overhead::cost
