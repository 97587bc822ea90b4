// What a simulated fleet costs: $/hour of its GPUs and CPU workers at the scenario's prices, and
// $ per request at the throughput it served.
#pragma once

#include "cost/scenario.hpp"

namespace overhead::cost {

struct FleetCost {
  double gpu_usd_per_hour = 0, cpu_usd_per_hour = 0, usd_per_hour = 0, usd_per_request = 0;
};

FleetCost fleet_cost(const Scenario& sc, int gpus, int workers, double requests_per_s);

}  // namespace overhead::cost
