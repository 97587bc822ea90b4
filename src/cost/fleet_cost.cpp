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

}  // namespace overhead::cost
