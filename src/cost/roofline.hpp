// The GPU side D(y|x) from first principles: prefill is compute-bound (2 FLOPs per active
// parameter per token), a decode step is bandwidth-bound (the weights are read once per step and
// shared across the batch; each sequence reads its own KV cache).
#pragma once

#include "cost/profiles.hpp"

namespace overhead::cost {

struct Roofline {
  double gpus = 1;                 // tensor-parallel GPUs serving one model replica
  double flops_per_s = 0;          // achieved: peak x efficiency x gpus
  double bytes_per_s = 0;          // achieved: peak x efficiency x gpus
  double memory_bytes = 0;         // total GPU memory of the replica
  double weight_bytes = 0;         // parameters x bytes per parameter
  double active_parameters = 0;
  double kv_bytes_per_token = 0;
  double max_concurrency = 1;      // the engine's cap on running sequences
};

Roofline make_roofline(const GpuProfile& gpu, const ModelProfile& model, int gpus);

// Seconds to prefill `input_tokens` (the larger of the compute time and one pass over the weights).
double prefill_seconds(const Roofline& r, double input_tokens);
// Seconds of one decode step with `batch` running sequences of mean context `context_tokens`.
double decode_step_seconds(const Roofline& r, double batch, double context_tokens);
// Sequences that fit beside the weights, each holding `tokens_per_sequence` of KV cache, capped by
// max_concurrency; at least 1. Throws CostError when the weights alone do not fit.
double concurrency_limit(const Roofline& r, double tokens_per_sequence);

// One request's GPU time at a steady batch: prefill plus out steps at the batch's step time.
double request_seconds(const Roofline& r, double input_tokens, double output_tokens, double batch);
// GPU seconds one request costs when `batch` sequences share each step (prefill is not shared).
double amortized_gpu_seconds(const Roofline& r, double input_tokens, double output_tokens, double batch);

}  // namespace overhead::cost
