// The flags `cost` and `simulate` share to describe a deployment (--gpu, --model, --gpus, --tp,
// --precision, --kv-dtype, the engine's settings and the prices), each checked as typed (finite,
// in range, else a usage error naming the flag), and their conversion to a cost::ScenarioSpec.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cost/scenario.hpp"

namespace overhead::cli {

struct ServingFlags {
  std::string gpu, model, precision, kv_dtype = "bf16", engine_file, engine_profile, instance;
  int gpus = 1, tp = 0;
  double max_batch = 0, prefill_chunk = 0, memory_fraction = 0;
  double gpu_usd_per_hour = -1, cpu_usd_per_hour = -1;
};

void add_serving_flags(CLI::App& cmd, ServingFlags& f);
cost::ScenarioSpec scenario_spec(const ServingFlags& f, const std::string& profiles_dir);

// "A,B": exactly two finite numbers (a third value is refused, not dropped).
CLI::Validator number_pair_check();

// The engine settings a run used, for --json.
nlohmann::json engine_json(const cost::EngineParams& e, const cost::Roofline& replica);

}  // namespace overhead::cli
