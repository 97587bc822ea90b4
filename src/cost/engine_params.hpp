// The serving engine's parameters that no datasheet gives: the achieved shares of peak bandwidth
// and compute, the per-step overhead, the KV memory fraction, the batch cap and the prefill
// budget. The shipped values (data/calibration/engine.json) are fitted on published measurements
// (data/calibration/published.csv, docs/cost-model.md); `overhead calibrate` will write the same
// fields for one's own engine.
#pragma once

#include <filesystem>
#include <string>

#include "cost/profiles.hpp"

namespace overhead::cost {

struct EngineParams {
  double bandwidth_efficiency = 0.8, compute_efficiency = 0.6;
  double step_overhead_s = 0.004;
  double memory_fraction = 0.9;
  double max_batch = 2048;
  double prefill_chunk_tokens = 8192;
  std::string origin = "built-in defaults";
};

// Reads a file with the figures bandwidth_efficiency, compute_efficiency, step_overhead_ms,
// memory_fraction, max_batch and prefill_chunk_tokens. Errors name the file and field.
EngineParams load_engine_params(const std::filesystem::path& file);

// data/calibration/engine.json beside a profiles folder (DATA/profiles -> DATA/calibration).
std::filesystem::path default_engine_file(const std::filesystem::path& profiles_dir);

}  // namespace overhead::cost
