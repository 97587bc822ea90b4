#include "cost/chain_config.hpp"

#include <algorithm>
#include <utility>

#include "cost/service_times.hpp"

namespace overhead::cost {

int gpu_slots_for(const Scenario& scenario, const std::vector<SimRequest>& workload) {
  double mean_tokens = 0;
  for (const auto& q : workload) mean_tokens += q.input_tokens + q.output_tokens;
  mean_tokens /= static_cast<double>(workload.size());
  return static_cast<int>(concurrency_limit(scenario.replica, mean_tokens)) * scenario.replicas;
}

SimConfig chain_config(ChainSpec spec, const Scenario& scenario) {
  SimConfig config;
  config.arrival_rate = spec.rate;
  if (spec.burst_cv > 0) {
    config.arrivals = Arrivals::gamma;
    config.arrival_cv = spec.burst_cv;
  }
  config.requests = spec.requests;
  config.seed = spec.seed;
  config.workload = std::move(spec.workload);
  if (spec.replay) {
    config.arrivals = Arrivals::replay;
    config.requests = spec.replayed.size();
    config.arrival_times = std::move(spec.replayed);
  }
  config.input = spec.input;
  if (spec.publishers > 0) {
    config.publish.publishers = spec.publishers;
    config.publish.capacity = spec.publish_capacity ? spec.publish_capacity : 2 * static_cast<std::size_t>(spec.publishers);
    const double seconds = spec.publish_s;
    config.publish.publish_s = [seconds](const SimRequest&, double, std::mt19937_64&) { return seconds; };
  }
  config.consumer = spec.consumer;
  config.stages.push_back({"cpu", spec.workers, cpu_service(spec.e, spec.e_exponential)});
  config.stages.push_back({"gpu", spec.gpu_slots, gpu_slot_service(scenario.replica, scenario.replicas, spec.d_exponential)});
  return config;
}

double half_turnover_s(const std::string& fits_file, int case_number, const std::string& tokenizer, std::string& chosen) {
  const auto fits = e_batch_from_fits(fits_file, case_number);
  const auto* fit = &fits.front();
  for (const auto& f : fits)
    if (f.first == tokenizer) fit = &f;
  chosen = fit->first;
  return std::max(0.0, fit->second.turnover_us) / 2 / 1e6;
}

}  // namespace overhead::cost
