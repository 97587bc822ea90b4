// One front door for pricing: what `cost`, `simulate` and the report's cost section are asked
// (profile names, GPU count, tensor parallelism, precisions, engine settings, prices) turned into
// the inputs of the server model: the profiles, one replica's Roofline, the number of replicas,
// and the GPU and CPU prices with where they came from. The pricing lookup lives here only.
#pragma once

#include <filesystem>
#include <string>

#include "cost/engine_params.hpp"
#include "cost/engine_preset.hpp"
#include "cost/profiles.hpp"
#include "cost/roofline.hpp"

namespace overhead::cost {

struct ScenarioSpec {
  std::filesystem::path profiles_dir;
  std::string gpu, model;
  int gpus = 1;                      // the whole fleet
  int tp = 0;                        // GPUs per replica; 0: all of --gpus (one replica)
  std::string precision;
  std::string kv_dtype;              // empty: follows `precision` (fp8 or fp4 weights: FP8 KV), else BF16
  std::string engine_file;           // empty: data/calibration/engine.json beside the profiles
  std::string engine_profile;        // `overhead calibrate`'s profile: in place of gpu and model
  std::string engine_preset;         // NAME[@VERSION] (engine_preset.hpp): the engine's own defaults
  double scheduler_steps = 0;        // 0: the preset's (else 1)
  double max_batch = 0, prefill_chunk_tokens = 0, memory_fraction = 0;  // 0: the engine file's
  double gpu_usd_per_hour = -1, cpu_usd_per_hour = -1;                  // < 0: the presets
  std::string instance;  // with engine_profile: the replica's price from this instance preset
  // Only latency is asked (simulate): no GPU price is an unpriced scenario, not an error.
  bool price_optional = false;
};

struct Scenario {
  EnginePreset preset;  // empty name: none
  GpuProfile gpu;
  ModelProfile model;
  ServingOptions serving;
  Roofline replica;
  int replicas = 1;
  double gpu_usd_per_hour = 0, cpu_usd_per_hour = 0;
  std::string gpu_price_source, cpu_price_source;
  bool priced = true;  // false: no GPU price was given or preset (price_optional), $ figures are not printed
  Prices prices;
};

// With engine_profile, the replica is the measured engine (engine_profile.hpp): gpu and model
// must be empty, --gpus counts replicas, and the price is --gpu-usd-per-hour or the named
// instance preset (--instance, data/profiles/price/prices.json), one of the two.
// The KV cache's precision when none is given: FP8 with FP8 or FP4 weights asked for (the
// quantized checkpoints and engines pair them), else BF16.
std::string kv_dtype_for(const ScenarioSpec& spec);

// Throws CostError: unknown profiles, --gpus not a multiple of --tp, weights that do not fit a
// replica, no price preset for the GPU.
Scenario make_scenario(const ScenarioSpec& spec);

}  // namespace overhead::cost
