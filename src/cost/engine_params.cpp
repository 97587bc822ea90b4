#include "cost/engine_params.hpp"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cost/json_file.hpp"

namespace overhead::cost {
namespace {

double field(const nlohmann::json& j, const char* key, const std::filesystem::path& file, double lo, double hi) {
  if (!j.contains(key) || !j[key].is_object() || !j[key].contains("value") || !j[key]["value"].is_number())
    throw CostError(file.string() + ": missing figure \"" + key + "\" (an object with a number \"value\")");
  const double v = j[key]["value"].get<double>();
  if (!(v >= lo && v <= hi))
    throw CostError(file.string() + ": " + key + ".value must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

}  // namespace

EngineParams load_engine_params(const std::filesystem::path& file) {
  const nlohmann::json j = read_json_file(file);
  EngineParams p;
  p.bandwidth_efficiency = field(j, "bandwidth_efficiency", file, 0.01, 1);
  p.compute_efficiency = field(j, "compute_efficiency", file, 0.01, 1);
  p.step_overhead_s = field(j, "step_overhead_ms", file, 0, 1000) / 1000;
  p.sequence_overhead_s = j.contains("sequence_overhead_us") ? field(j, "sequence_overhead_us", file, 0, 1e6) / 1e6 : 0;
  p.allreduce_latency_s = j.contains("allreduce_latency_us") ? field(j, "allreduce_latency_us", file, 0, 1e6) / 1e6 : 0;
  p.matmul_reference_share = j.contains("matmul_reference_share") ? field(j, "matmul_reference_share", file, 0.01, 1) : 0;
  p.memory_fraction = field(j, "memory_fraction", file, 0.01, 1);
  p.runtime_reserve_gb = j.contains("runtime_reserve_gb") ? field(j, "runtime_reserve_gb", file, 0, 1e3) : 0;
  p.max_batch = field(j, "max_batch", file, 1, 1e6);
  p.prefill_chunk_tokens = field(j, "prefill_chunk_tokens", file, 1, 1e7);
  p.origin = file.string();
  return p;
}

std::filesystem::path default_engine_file(const std::filesystem::path& profiles_dir) {
  return data_dir_beside(profiles_dir, "calibration") / "engine.json";
}

std::map<std::string, double> load_engine_factors(const std::filesystem::path& file) {
  const auto j = read_json_file(file);
  std::map<std::string, double> factors;
  for (const auto& [name, entry] : j.items()) {
    if (!entry.is_object()) continue;  // "note"
    if (!entry.contains("value") || !entry["value"].is_number() || !(entry["value"].get<double>() > 0))
      throw CostError(file.string() + ": " + name + ".value must be a positive number");
    factors[name] = entry["value"].get<double>();
  }
  return factors;
}

std::filesystem::path default_engine_factors_file(const std::filesystem::path& profiles_dir) {
  return data_dir_beside(profiles_dir, "calibration") / "engine_factors.json";
}

void apply_engine_factor(EngineParams& engine, double factor, const std::string& file) {
  engine.bandwidth_efficiency = std::min(1.0, engine.bandwidth_efficiency * factor);
  engine.compute_efficiency = std::min(1.0, engine.compute_efficiency * factor);
  engine.efficiency_factor = factor;
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", factor);
  engine.origin += ", efficiency factor " + std::string(text) + " (" + file + ")";
}

}  // namespace overhead::cost
