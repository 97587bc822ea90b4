// The server model behind `overhead cost` and `overhead simulate`: one replica (tp GPUs) running a
// continuous-batching engine. Each engine step runs every active decode plus a prefill-token
// budget (chunked prefill); its time is a per-step overhead plus the larger of the bytes it moves
// (the weights once, the KV cache of every active sequence) over the achieved bandwidth and the
// FLOPs it does over the achieved compute roof, plus two all-reduces per layer across the tp GPUs.
// Sequences join and leave at step boundaries, each holding KV for its input and the output it has
// produced, and reserving at admission the share of the rest its engine reserves (output_reserved).
// The steady state (steady_state) and the step-by-step simulator (engine_sim.hpp) use the same
// step_seconds(), so the two commands agree by construction and a test checks it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cost/engine_params.hpp"
#include "cost/profiles.hpp"

namespace overhead::cost {

// A measured engine's decode-only step against its batch, as `overhead calibrate` measured it: at
// each calibrated batch a line in the sequences' mean context; between two calibrated batches
// linear in the batch, below the first toward `at_zero_s` (the step's fixed part), past the last
// along the last two. Measured rather than a formula because a step's cost per context token is
// not one number: on the tests' llama.cpp engine a lone sequence's context costs 0.4 us a token
// and each of two to eight sequences' 0.9 to 1.2 us. Empty for a datasheet GPU.
struct DecodeLevel {
  double batch = 0;                // the mean number of sequences the level's steps decoded
  double step_s = 0;               // the step at no context
  double s_per_context_token = 0;  // and per token of the sequences' mean context
};
struct DecodeTable {
  double at_zero_s = 0;
  std::vector<DecodeLevel> levels;  // by batch, ascending
  [[nodiscard]] bool empty() const { return levels.empty(); }
  [[nodiscard]] double seconds(double batch, double mean_context) const;
};

// What one replica is: everything a step's time depends on, per replica (tp GPUs together).
struct Roofline {
  double gpus = 1;                    // tensor-parallel GPUs in the replica
  double flops_per_s = 0;             // achieved: peak at the precision x efficiency x gpus
  double bytes_per_s = 0;             // achieved: peak x efficiency x gpus
  double memory_bytes = 0;            // total GPU memory of the replica
  double weight_bytes = 0;            // every weight at its precision (embeddings in BF16)
  double expert_weight_bytes = 0;     // the part of weight_bytes in routed experts (MoE), else 0
  double experts = 1, experts_per_token = 1;
  double active_parameters = 0;       // FLOPs per token = 2 x this (over the replica's GPUs together)
  // Attention FLOPs per query token and context token: a prompt token's and a decode's
  // (Architecture::*_attention_flops_per_context_token), run at attention_flops_per_s (0: at
  // flops_per_s), the roof of the wider of the weights' and the KV cache's precisions (the
  // queries come from the one, keys and values from the other).
  double attention_flops_per_context_token = 0;
  double decode_attention_flops_per_context_token = 0;
  double attention_flops_per_s = 0;
  // The replica's KV bytes per token: every GPU's copy (Architecture::cached_kv_heads), so what
  // the memory holds and what a step reads.
  double kv_bytes_per_token = 0;
  double max_concurrency = 1;         // the engine's cap on running sequences
  double prefill_chunk_tokens = 8192; // the engine's prefill-token budget per step
  double memory_fraction = 0.9;       // share of the memory the weights leave that holds KV
  // The share of a request's output whose KV the engine reserves when it admits the request: 1
  // reserves it whole, so a running sequence never runs out (TensorRT-LLM's GUARANTEED_NO_EVICT);
  // 0 allocates each token's KV as it is produced and, when the cache is full, preempts the
  // sequence admitted last, which later computes its prompt and output so far again (vLLM V1).
  double output_reserved = 1;
  // The prefill budget is of every token a step runs, the decodes' included (vLLM V1's one token
  // budget a step), not of the prompt tokens alone.
  bool decodes_share_budget = false;
  // SGLang's share adapts (EngineParams::reserve_adapts): from output_reserved down to
  // reserve_floor by reserve_decay a step; after a retraction, what the running sequences have
  // produced plus retract_headroom_steps tokens each, of their maximum.
  bool reserve_adapts = false;
  double reserve_floor = 0, reserve_decay = 0, retract_headroom_steps = 0;
  double reserved_bytes = 0;          // the replica's runtime memory beside weights and KV (EngineParams::runtime_reserve_gb)
  bool memory_of_total = false;       // memory_fraction is of the whole memory, weights included
  // Decode steps the engine schedules at once (multi-step scheduling): sequences join only at a
  // burst's boundary, and a burst's tokens reach the client together at its end.
  double scheduler_steps = 1;
  double step_overhead_s = 0;         // per step: scheduling, launches
  double sequence_overhead_s = 0;     // per decoding sequence per step: sampling, bookkeeping
  // Per prompt token of the step, added outside the roofline: an engine measured by `overhead
  // calibrate` (engine_profile.hpp), whose prefill rate is known but not its FLOPs. 0 otherwise.
  double prefill_s_per_token = 0;
  // The same engine's prompt attention: per prompt token and context token it attends to (the
  // step's prefill_context). 0 otherwise (the datasheet attention is in the FLOPs).
  double prefill_s_per_context_token = 0;
  // Per request, outside the steps: what a measured engine's TTFT holds besides its prefill step
  // (the HTTP exchange, tokenizing the prompt). Added to the TTFT; a closed loop's clients spend it
  // outside the engine. 0 otherwise.
  double request_overhead_s = 0;
  // A measured engine's prompt scheduling: the share k of the other prompts' prefill work in flight
  // with a request's that it waits through before its first token (of requests sent together, 1/2
  // when prompts go in arrival order, 1 when each step's prompt budget is split evenly over them,
  // 0 when they never delay each other). Fitted by `overhead calibrate`; 0 otherwise. In a closed
  // loop, where the others' prompts take a share rho of the engine's time, a prefill of S seconds
  // alone ends after S (1 - (1 - k) rho) / (1 - rho): processor sharing at k = 1, first come first
  // served at 1/2 (steady_state).
  double queue_share = 0;
  // A measured engine's decode steps (in place of step_overhead_s, sequence_overhead_s and the
  // decodes' KV bytes), from the same profile. Empty otherwise.
  DecodeTable decode_steps;
  double layers = 0, hidden_size = 0;
  double allreduce_latency_s = 0;     // one all-reduce
  double link_bytes_per_s = 0;        // per direction, per GPU
  // Every GPU linked to every other (GpuProfile::interconnect_full_mesh), and an engine that runs
  // its own all-reduce kernels there up to this many bytes (EngineParams; 0: none): such an
  // all-reduce on 2, 4, 6 or 8 GPUs is one exchange with all peers at once (one-shot) or two
  // (two-shot), not a ring of 2 (g - 1) hops (step_seconds).
  bool full_mesh = false;
  double custom_allreduce_max_bytes = 0;
};

// How the replica is configured: the flags of `cost` and `simulate`.
struct ServingOptions {
  int tp = 1;
  std::string precision;  // empty: the model profile's
  std::string kv_dtype = "bf16";
  EngineParams engine;
};

// Throws CostError when tp < 1, tp > 1 on a GPU without an interconnect figure, or a bad precision.
Roofline make_roofline(const GpuProfile& gpu, const ModelProfile& model, const ServingOptions& options);

// What one step runs.
struct StepLoad {
  double decodes = 0;               // sequences producing one token each
  double decode_context = 0;        // sum of their context lengths (tokens of KV read)
  double prefill_tokens = 0;        // prompt tokens processed in this step
  double prefill_context = 0;       // sum over those tokens of the context each attends to
};
double step_seconds(const Roofline& r, const StepLoad& load);

// Tokens of KV the replica holds: memory_fraction x (memory - weights). Throws CostError naming
// the memory needed and available when the weights do not fit.
double kv_capacity_tokens(const Roofline& r);

// Sequences of `tokens_per_sequence` (input + output) that can run together: the engine cap, or
// fewer when the KV cache cannot hold that many. Throws CostError, with the memory one sequence
// needs and what is available, when it cannot hold even one.
double concurrency_limit(const Roofline& r, double tokens_per_sequence);

// The lengths a steady state runs. Not only the means: a request holds its slot for its prefill
// and decode steps, so the sequences in flight at an instant are the long ones more often than the
// requests are (length-biased), and what the KV cache must hold per running sequence, and what a
// decode step reads, are the draws' averages weighted by the steps each request runs.
struct LengthMix {
  double in = 0, out = 1;       // the requests' mean input and output tokens
  double held_tokens = 1;       // KV tokens a running sequence holds or has reserved, over its steps
  double decode_context = 0.5;  // a decoding sequence's context, over its decode steps
  // The prompts' lengths in groups, (length, share of the requests); empty: every prompt at `in`.
  std::vector<std::pair<double, double>> prompts;
};
// One request of `in` and `out` tokens (every request alike).
LengthMix length_mix(const Roofline& r, double in, double out);
// The requests `in[i]`, `out[i]` (equal sizes, at least one).
LengthMix length_mix(const Roofline& r, const std::vector<double>& in, const std::vector<double>& out);

// The replica's steady state with `sequences` requests of `in` and `out` tokens kept in flight
// (closed loop; above the concurrency limit the rest wait). `open_loop`: arrivals at random
// instants wait on average half a step for the next boundary, counted in the TTFT.
struct SteadyState {
  double sequences = 0;          // running (at most the concurrency limit)
  double step_s = 0;             // the mean step
  double completions_per_step = 0;
  double requests_per_s = 0, output_tokens_per_s = 0;
  double prefill_steps = 0;      // steps a request spends in prefill
  double prefill_s = 0;          // the time of those steps
  double ttft_s = 0;
  // After the first token: the decode steps, and the steps of the other requests' prefills that
  // fall between a request's first and last token (its own is before its first token).
  double tpot_s = 0;
  // Inter-token latency per token: the steps a decoding sequence sees, prompt-carrying and
  // decode-only in their shares (its mean is step_s).
  double itl_p50_s = 0, itl_p95_s = 0, itl_p99_s = 0;
  bool prefill_bound = false;    // the prefill budget, not the slots, limits the rate
};
SteadyState steady_state(const Roofline& r, double sequences, double in, double out, bool open_loop);
// The same over a mix of lengths: the KV limit from what a running sequence holds, a decode
// step's reads from a decoding sequence's context, the steps at the mean lengths.
SteadyState steady_state(const Roofline& r, double sequences, const LengthMix& m, bool open_loop);

// The steady state that serves `requests_per_s` (open loop): the fewest sequences in flight that
// reach that rate. Throws CostError when the rate is above the replica's capacity.
SteadyState steady_state_at_rate(const Roofline& r, double requests_per_s, double in, double out);
SteadyState steady_state_at_rate(const Roofline& r, double requests_per_s, const LengthMix& m);

}  // namespace overhead::cost
