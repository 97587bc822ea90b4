// Engine presets (`--engine-preset vllm|sglang|trtllm|llamacpp[@VERSION]`): what each serving
// engine does by default that the server model must know, read from data/engines/NAME.json where
// every value cites the engine's own docs or source: its cap on running sequences, whether its
// memory fraction is of the whole GPU (vLLM, SGLang) or of what the weights leave (TensorRT-LLM),
// its prefill budget per step and chunking policy, multi-step scheduling (tokens delivered in
// bursts), prefix caching and CUDA-graph batch sizes (recorded; not modelled). The efficiencies
// are not an engine default: they stay the fitted ones (engine_params.hpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "cost/engine_params.hpp"

namespace overhead::cost {

// One setting as the preset states it, for --json and --list.
struct PresetSetting {
  std::string name, value, source;
};

struct EnginePreset {
  std::string name, version;  // "vllm", "v1"
  std::string note;           // where the values were read
  std::vector<PresetSetting> settings;
};

// What the preset resolves to depends on the deployment: vLLM's prefill budget on the GPU,
// SGLang's memory fraction on the tensor parallelism, its prefill budget on the GPU's memory.
struct PresetTarget {
  std::string gpu;
  double gpu_memory_gb = 80;
  int tp = 1;
};

// Applies NAME[@VERSION] to `engine` (max_batch, memory_fraction and its meaning, prefill budget,
// scheduler steps, prefix caching, CUDA-graph batch) and returns the preset. A preset that leaves
// the batch cap to the deployment (llama.cpp's --parallel auto) sets max_batch 0: the caller asks
// for --max-batch. Throws CostError naming the known presets and versions.
EnginePreset apply_engine_preset(const std::string& name_at_version, const std::filesystem::path& engines_dir,
                                 const PresetTarget& target, EngineParams& engine);

// data/engines beside a profiles folder (DATA/profiles -> DATA/engines).
std::filesystem::path default_engines_dir(const std::filesystem::path& profiles_dir);

// The shipped presets' names, sorted ("llamacpp", "sglang", ...).
std::vector<std::string> list_engine_presets(const std::filesystem::path& engines_dir);

}  // namespace overhead::cost
