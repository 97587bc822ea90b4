#include "cost/roofline.hpp"

#include <algorithm>
#include <cmath>

namespace overhead::cost {

Roofline make_roofline(const GpuProfile& gpu, const ModelProfile& model, int gpus) {
  if (gpus < 1) throw CostError("--gpus must be at least 1");
  Roofline r;
  r.gpus = gpus;
  r.flops_per_s = gpu.peak_tflops.value * 1e12 * gpu.compute_efficiency.value * gpus;
  r.bytes_per_s = gpu.bandwidth_gb_per_s.value * 1e9 * gpu.bandwidth_efficiency.value * gpus;
  r.memory_bytes = gpu.memory_gb.value * 1e9 * gpus;
  r.weight_bytes = model.parameters.value * model.bytes_per_parameter.value;
  r.active_parameters = model.active_parameters.value;
  r.kv_bytes_per_token = model.kv_bytes_per_token.value;
  r.max_concurrency = model.max_concurrency.value;
  return r;
}

double prefill_seconds(const Roofline& r, double input_tokens) {
  if (input_tokens <= 0) return 0;
  const double compute = 2.0 * r.active_parameters * input_tokens / r.flops_per_s;
  const double weights = r.weight_bytes / r.bytes_per_s;
  return std::max(compute, weights);
}

double decode_step_seconds(const Roofline& r, double batch, double context_tokens) {
  // All expert weights are counted as read each step: at serving batch sizes nearly every expert of
  // an MoE is routed to by some sequence.
  const double bytes = r.weight_bytes + batch * context_tokens * r.kv_bytes_per_token;
  const double memory = bytes / r.bytes_per_s;
  const double compute = 2.0 * r.active_parameters * batch / r.flops_per_s;
  return std::max(memory, compute);
}

double concurrency_limit(const Roofline& r, double tokens_per_sequence) {
  const double free_bytes = r.memory_bytes * 0.9 - r.weight_bytes;  // 10% for activations and the engine
  if (free_bytes <= 0)
    throw CostError("the model's weights do not fit in the GPUs' memory (use more --gpus or a larger GPU)");
  const double per_sequence = std::max(1.0, tokens_per_sequence) * r.kv_bytes_per_token;
  return std::clamp(std::floor(free_bytes / per_sequence), 1.0, r.max_concurrency);
}

double request_seconds(const Roofline& r, double input_tokens, double output_tokens, double batch) {
  const double context = input_tokens + output_tokens / 2.0;
  return prefill_seconds(r, input_tokens) + output_tokens * decode_step_seconds(r, batch, context);
}

double amortized_gpu_seconds(const Roofline& r, double input_tokens, double output_tokens, double batch) {
  // In a shared batch the weight pass of a prefill is shared too: only its compute is this request's.
  const double context = input_tokens + output_tokens / 2.0;
  const double prefill_compute = 2.0 * r.active_parameters * std::max(0.0, input_tokens) / r.flops_per_s;
  return prefill_compute + output_tokens * decode_step_seconds(r, batch, context) / batch;
}

}  // namespace overhead::cost
