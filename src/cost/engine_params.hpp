// The serving engine's parameters that no datasheet gives: the achieved shares of peak bandwidth
// and compute, the per-step overhead, the KV memory fraction, the batch cap and the prefill
// budget. The shipped values (data/calibration/engine.json) are fitted on published measurements
// (data/calibration/published.csv, docs/cost-model.md); `overhead calibrate` will write the same
// fields for one's own engine.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "cost/profiles.hpp"

namespace overhead::cost {

struct EngineParams {
  double bandwidth_efficiency = 0.8, compute_efficiency = 0.6;
  double step_overhead_s = 0.004;
  double sequence_overhead_s = 0;  // per decoding sequence per step: sampling, scheduling
  double allreduce_latency_s = 0;  // one all-reduce across the replica's GPUs; 0: the GPU profile's
  // The matmul share of peak (GpuProfile::matmul_achievable_share) of the GPUs the efficiencies
  // were fitted on; 0: none, every GPU's compute at compute_efficiency of its peak.
  double matmul_reference_share = 0;
  // The largest all-reduce the engine runs with its own one- or two-shot kernel on a full mesh
  // (Roofline::custom_allreduce_max_bytes); 0: every all-reduce a ring (the base fit's).
  double custom_allreduce_max_bytes = 0;
  double memory_fraction = 0.9;
  // GB each GPU's runtime holds beside the weights and the KV cache (the CUDA context, a prefill
  // chunk's activations, CUDA graphs, communication buffers), when memory_fraction is of what
  // they leave (TensorRT-LLM sizes its cache from the memory free after them). A fraction of the
  // whole memory (memory_of_total) leaves the runtime the rest instead: no reserve beside it.
  double runtime_reserve_gb = 0;
  double max_batch = 2048;
  double prefill_chunk_tokens = 8192;
  // What an engine preset (engine_preset.hpp) sets beside them: memory_fraction's share is of the
  // whole memory, weights included (vLLM's gpu_memory_utilization, SGLang's mem_fraction_static),
  // not of what the weights leave (TensorRT-LLM's); decode steps scheduled together, their tokens
  // delivered at the end of the burst (vLLM's --num-scheduler-steps); prefix caching and the largest
  // CUDA-graph batch (recorded, not modelled: the workloads share no prefix, and no source gives
  // the cost of a step past the graphs).
  bool memory_of_total = false;
  // The share of a request's output whose KV is reserved at admission (Roofline::output_reserved):
  // 1 for TensorRT-LLM's GUARANTEED_NO_EVICT, 0 for vLLM's on-demand blocks with preemption.
  double output_reserved = 1;
  // SGLang: the share adapts (new_token_ratio), from output_reserved down to reserve_floor over
  // reserve_decay_steps steps, and after a retraction to what the running have produced plus
  // retract_headroom_steps tokens each, of their maximum.
  bool reserve_adapts = false;
  double reserve_floor = 0, reserve_decay_steps = 1, retract_headroom_steps = 0;
  // The prefill budget counts the step's decodes too (Roofline::decodes_share_budget).
  bool decodes_share_budget = false;
  double scheduler_steps = 1;
  bool prefix_caching = false;
  double cuda_graph_max_batch = 0;
  std::string preset;  // "vllm@v1"; empty: none
  // The engine's efficiency factor (data/calibration/engine_factors.json) the efficiencies were
  // multiplied by with the preset (apply_engine_factor); 1: none.
  double efficiency_factor = 1;
  std::string origin = "built-in defaults";
};

// Reads a file with the figures bandwidth_efficiency, compute_efficiency, step_overhead_ms,
// sequence_overhead_us, allreduce_latency_us and matmul_reference_share (optional, 0 when absent),
// memory_fraction, runtime_reserve_gb (optional, 0 when absent), max_batch and prefill_chunk_tokens. Errors name the file and field.
EngineParams load_engine_params(const std::filesystem::path& file);

// data/calibration/engine.json beside a profiles folder (DATA/profiles -> DATA/calibration).
std::filesystem::path default_engine_file(const std::filesystem::path& profiles_dir);

// Per-engine efficiency factors, fitted on each engine's published rows beside the base fit:
// {"vllm": {"value": F, ...}, ...}. Throws CostError naming the file.
std::map<std::string, double> load_engine_factors(const std::filesystem::path& file);
// data/calibration/engine_factors.json beside a profiles folder.
std::filesystem::path default_engine_factors_file(const std::filesystem::path& profiles_dir);
// The bandwidth and compute efficiencies times `factor` (each at most 1), recorded in
// efficiency_factor and origin (`file` names where it was read).
void apply_engine_factor(EngineParams& engine, double factor, const std::string& file);

}  // namespace overhead::cost
