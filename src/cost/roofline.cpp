#include "cost/roofline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

namespace overhead::cost {
namespace {

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}

}  // namespace

Roofline make_roofline(const GpuProfile& gpu, const ModelProfile& model, const ServingOptions& o) {
  if (o.tp < 1) throw CostError("--tp must be at least 1");
  if (o.tp > 1 && gpu.interconnect_gb_per_s.value <= 0)
    throw CostError("--tp " + std::to_string(o.tp) + ": the GPU profile " + gpu.name + " gives no interconnect_gb_per_s");
  const std::string precision = o.precision.empty() ? model.precision : o.precision;
  const double weight_bytes_each = precision_bytes(precision, "--precision");
  const double kv_bytes_each = precision_bytes(o.kv_dtype, "--kv-dtype");
  if (o.kv_dtype == "fp4") throw CostError("--kv-dtype must be bf16 or fp8, got \"fp4\"");
  const auto& a = model.arch;
  const EngineParams& e = o.engine;
  // A GPU whose measured matmuls reach a smaller share of its peak than the fitted GPUs' runs the
  // fitted efficiency at that much less (and more where they reach more): the fit is of the
  // engine's share of what the hardware and its libraries can do, not of the datasheet's peak.
  const double matmul_scale = gpu.matmul_achievable_share.value > 0 && e.matmul_reference_share > 0
                                  ? gpu.matmul_achievable_share.value / e.matmul_reference_share
                                  : 1;
  const double compute_eff = gpu.compute_efficiency.value > 0 ? gpu.compute_efficiency.value : std::min(1.0, e.compute_efficiency * matmul_scale);
  const double bandwidth_eff = gpu.bandwidth_efficiency.value > 0 ? gpu.bandwidth_efficiency.value : e.bandwidth_efficiency;
  Roofline r;
  r.gpus = o.tp;
  r.flops_per_s = gpu.peak_for(precision) * 1e12 * compute_eff * o.tp;
  r.bytes_per_s = gpu.bandwidth_gb_per_s.value * 1e9 * bandwidth_eff * o.tp;
  r.memory_bytes = gpu.memory_bytes() * o.tp;
  // Quantized checkpoints keep the embeddings and the LM head in BF16. MLA's down projections are
  // whole on every GPU: tp - 1 copies more to hold, read and run.
  const double replicated = a.replicated_attention_parameters() * (o.tp - 1);
  const double linear = a.attention_parameters() + a.always_on_mlp_parameters() + a.expert_parameters() + replicated;
  r.weight_bytes = a.embedding_parameters() * 2 + linear * weight_bytes_each;
  r.expert_weight_bytes = a.experts > 1 ? a.expert_parameters() * weight_bytes_each : 0;
  r.experts = a.experts;
  r.experts_per_token = a.experts_per_token;
  r.active_parameters = a.active_parameters() + replicated;
  r.attention_flops_per_context_token = a.prefill_attention_flops_per_context_token();
  r.decode_attention_flops_per_context_token = a.decode_attention_flops_per_context_token();
  const std::string attention_precision = weight_bytes_each >= kv_bytes_each ? precision : o.kv_dtype;
  r.attention_flops_per_s = gpu.peak_for(attention_precision) * 1e12 * compute_eff * o.tp;
  // Each GPU holds ceil(kv_heads / tp) heads (at least one whole head).
  const double kv_heads = a.cached_kv_heads();
  const double heads_held = o.tp * std::ceil(kv_heads / o.tp);
  r.kv_bytes_per_token = a.kv_bytes_per_token(kv_bytes_each) * heads_held / kv_heads;
  r.max_concurrency = model.max_concurrency.value > 0 ? std::min(model.max_concurrency.value, e.max_batch) : e.max_batch;
  r.prefill_chunk_tokens = e.prefill_chunk_tokens;
  r.memory_fraction = e.memory_fraction;
  r.output_reserved = std::clamp(e.output_reserved, 0.0, 1.0);
  r.decodes_share_budget = e.decodes_share_budget;
  r.reserve_adapts = e.reserve_adapts;
  r.reserve_floor = std::clamp(e.reserve_floor, 0.0, 1.0);
  r.reserve_decay = e.reserve_adapts ? std::max(0.0, r.output_reserved - r.reserve_floor) / std::max(1.0, e.reserve_decay_steps) : 0;
  r.retract_headroom_steps = std::max(0.0, e.retract_headroom_steps);
  r.reserved_bytes = e.memory_of_total ? 0 : e.runtime_reserve_gb * 1e9 * o.tp;
  r.memory_of_total = e.memory_of_total;
  r.scheduler_steps = std::max(1.0, e.scheduler_steps);
  r.step_overhead_s = e.step_overhead_s;
  r.sequence_overhead_s = e.sequence_overhead_s;
  r.layers = a.layers;
  r.hidden_size = a.hidden_size;
  r.allreduce_latency_s = e.allreduce_latency_s > 0 ? e.allreduce_latency_s : gpu.allreduce_latency_us.value / 1e6;
  r.link_bytes_per_s = gpu.interconnect_gb_per_s.value * 1e9;
  r.full_mesh = gpu.interconnect_full_mesh.value > 0;
  r.custom_allreduce_max_bytes = e.custom_allreduce_max_bytes;
  return r;
}

double DecodeTable::seconds(double batch, double mean_context) const {
  const auto at = [&](const DecodeLevel& l) { return l.step_s + l.s_per_context_token * mean_context; };
  if (levels.empty() || batch <= 0) return at_zero_s;
  const auto between = [&](double b0, double t0, double b1, double t1) { return t0 + (t1 - t0) * (batch - b0) / (b1 - b0); };
  // Up to the first level (and past it when it is the only one): from the step's fixed part.
  if (batch <= levels.front().batch || levels.size() == 1) return between(0, at_zero_s, levels.front().batch, at(levels.front()));
  for (std::size_t i = 1; i < levels.size(); ++i)
    if (batch <= levels[i].batch) return between(levels[i - 1].batch, at(levels[i - 1]), levels[i].batch, at(levels[i]));
  const auto& a = levels[levels.size() - 2];
  const auto& b = levels.back();
  return between(a.batch, at(a), b.batch, at(b));
}

double step_seconds(const Roofline& r, const StepLoad& s) {
  const double tokens = s.decodes + s.prefill_tokens;
  // An MoE reads only the experts some token of the step routes to: with k of E per token and
  // routing taken as uniform, each expert is missed by all `tokens` with (1 - k/E)^tokens.
  const double touched = r.experts > 1 ? 1 - std::pow(1 - r.experts_per_token / r.experts, tokens) : 1;
  const double weights = r.weight_bytes - r.expert_weight_bytes + r.expert_weight_bytes * touched;
  const bool measured_decodes = !r.decode_steps.empty();
  const double bytes = weights + ((measured_decodes ? 0 : s.decode_context) + s.prefill_tokens) * r.kv_bytes_per_token;
  const double attention_flops = r.decode_attention_flops_per_context_token * s.decode_context +
                                 r.attention_flops_per_context_token * s.prefill_context;
  const double compute_s = 2 * r.active_parameters * tokens / r.flops_per_s +
                           attention_flops / (r.attention_flops_per_s > 0 ? r.attention_flops_per_s : r.flops_per_s);
  double comm = 0;
  if (r.gpus > 1 && tokens > 0 && r.layers > 0 && r.link_bytes_per_s > 0) {
    // Two all-reduces per layer (after attention and after the MLP) of the step's activations in
    // BF16. An engine with its own kernels (vLLM: csrc/custom_all_reduce.cuh, up to 8 MiB on 2,
    // 4, 6 or 8 fully connected GPUs) runs one-shot (every GPU reads the whole payload from each
    // peer at once: one latency) on 2 GPUs, under 512 KiB on up to 4 and under 256 KiB on up to
    // 8; two-shot otherwise (a reduce-scatter and an all-gather, each one exchange with all
    // peers: two latencies, 2 (g - 1) / g of the payload). Otherwise (the base fit, PCIe cards,
    // larger payloads) a ring: 2 (g - 1) hops, each paying the latency, and 2 (g - 1) / g of the
    // payload (the alpha-beta model of a ring all-reduce).
    const double payload = tokens * r.hidden_size * 2;
    const double g = r.gpus;
    const bool custom = r.full_mesh && payload < r.custom_allreduce_max_bytes && (g == 2 || g == 4 || g == 6 || g == 8);
    double one = 0;
    if (custom && (g == 2 || (g <= 4 && payload < 512.0 * 1024) || payload < 256.0 * 1024)) {
      one = r.allreduce_latency_s + (g - 1) * payload / r.link_bytes_per_s;
    } else if (custom) {
      one = 2 * r.allreduce_latency_s + 2 * (g - 1) / g * payload / r.link_bytes_per_s;
    } else {
      const double hops = 2 * (g - 1);
      one = hops * r.allreduce_latency_s + hops / g * payload / r.link_bytes_per_s;
    }
    comm = 2 * r.layers * one;
  }
  const double decodes_s = measured_decodes
                               ? r.decode_steps.seconds(s.decodes, s.decodes > 0 ? s.decode_context / s.decodes : 0)
                               : r.step_overhead_s + r.sequence_overhead_s * s.decodes;
  return decodes_s + r.prefill_s_per_token * s.prefill_tokens +
         r.prefill_s_per_context_token * s.prefill_context + std::max(bytes / r.bytes_per_s, compute_s) + comm;
}

double kv_capacity_tokens(const Roofline& r) {
  const double free_bytes = r.memory_bytes - r.reserved_bytes - r.weight_bytes;
  if (free_bytes <= 0)
    throw CostError("the model's weights (" + gb(r.weight_bytes) + ") do not fit in the replica's " + gb(r.memory_bytes) +
                    (r.reserved_bytes > 0 ? " less the runtime's " + gb(r.reserved_bytes) : std::string()) + " (use a larger --tp, more --gpus per replica, a lower --precision or a larger GPU)");
  if (r.memory_of_total) {
    // vLLM and SGLang: the fraction is of the whole memory, the weights inside it.
    const double kv_bytes = r.memory_fraction * r.memory_bytes - r.weight_bytes;
    if (kv_bytes <= 0)
      throw CostError("the model's weights (" + gb(r.weight_bytes) + ") do not fit in the memory fraction " +
                      std::to_string(r.memory_fraction) + " of the replica's " + gb(r.memory_bytes) +
                      " (use a larger --tp, a lower --precision or a larger --memory-fraction)");
    return kv_bytes / r.kv_bytes_per_token;
  }
  return r.memory_fraction * free_bytes / r.kv_bytes_per_token;
}

double concurrency_limit(const Roofline& r, double tokens_per_sequence) {
  const double kv_tokens = kv_capacity_tokens(r);
  const double need = std::max(1.0, tokens_per_sequence);
  if (need > kv_tokens)
    throw CostError("one sequence of " + std::to_string(static_cast<long long>(need)) + " tokens needs " +
                    gb(need * r.kv_bytes_per_token) + " of KV cache, but the replica has " +
                    gb(kv_tokens * r.kv_bytes_per_token) + " for KV (memory fraction " + std::to_string(r.memory_fraction) +
                    " of the " + gb(r.memory_bytes - r.reserved_bytes - r.weight_bytes) + " the weights leave of " + gb(r.memory_bytes) +
                    "): use a larger --tp, --kv-dtype fp8, or a shorter workload");
  return std::min(std::floor(kv_tokens / need), r.max_concurrency);
}

namespace {

// Prompt lengths a mix keeps apart: enough that a step's max(bytes, FLOPs) over the long prompts
// is within a percent of the draws' (the steady state runs a step per group).
constexpr std::size_t kPromptGroups = 32;

// The slot steps of a request: its prefill steps and out - 1 decode steps (steady_state's count).
double slot_steps(const Roofline& r, double in, double out) { return std::max(1.0, in / r.prefill_chunk_tokens) + out - 1; }

// What a request of `in` and `out` tokens holds over its slot steps, summed: its prompt and the
// reserved share of its output throughout, and the unreserved rest as it is produced (on average
// half of it over its decode steps).
double held_token_steps(const Roofline& r, double in, double out) {
  // SGLang's share adapts; a long run sits at its floor between retractions.
  const double f = std::clamp(r.reserve_adapts ? r.reserve_floor : r.output_reserved, 0.0, 1.0);
  return (in + f * out) * slot_steps(r, in, out) + (1 - f) * out / 2 * (out - 1);
}

}  // namespace

LengthMix length_mix(const Roofline& r, double in, double out) {
  LengthMix m = length_mix(r, std::vector<double>{in}, std::vector<double>{out});
  // Exactly, where the sum over the steps would round: the slot's whole KV when it is reserved.
  if (r.output_reserved >= 1 && !r.reserve_adapts) m.held_tokens = m.in + m.out;
  return m;
}

LengthMix length_mix(const Roofline& r, const std::vector<double>& in, const std::vector<double>& out) {
  if (in.empty() || in.size() != out.size()) throw CostError("a length mix needs as many inputs as outputs, at least one");
  double sum_in = 0, sum_out = 0, steps = 0, held = 0, decode_steps = 0, context = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const double x = std::max(0.0, in[i]), y = std::max(1.0, out[i]);
    sum_in += x;
    sum_out += y;
    steps += slot_steps(r, x, y);
    held += held_token_steps(r, x, y);
    decode_steps += y - 1;
    context += (y - 1) * (x + y / 2);
  }
  const double n = static_cast<double>(in.size());
  LengthMix m;
  m.in = sum_in / n;
  m.out = sum_out / n;
  m.held_tokens = held / steps;
  // The prompts in up to kPromptGroups groups of equal count, each at its mean length.
  if (in.size() > 1) {
    std::vector<double> sorted(in.begin(), in.end());
    for (double& x : sorted) x = std::max(0.0, x);
    std::sort(sorted.begin(), sorted.end());
    const std::size_t groups = std::min<std::size_t>(kPromptGroups, sorted.size());
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t from = g * sorted.size() / groups, to = (g + 1) * sorted.size() / groups;
      double sum = 0;
      for (std::size_t i = from; i < to; ++i) sum += sorted[i];
      m.prompts.emplace_back(sum / static_cast<double>(to - from), static_cast<double>(to - from) / n);
    }
  }
  m.decode_context = decode_steps > 0 ? context / decode_steps : m.in + m.out / 2;
  return m;
}

SteadyState steady_state(const Roofline& r, double sequences, double in, double out, bool open_loop) {
  return steady_state(r, sequences, length_mix(r, in, out), open_loop);
}

SteadyState steady_state(const Roofline& r, double sequences, const LengthMix& m, bool open_loop) {
  if (r.request_overhead_s > 0) {
    // A request spends request_overhead_s outside the engine: added to its TTFT, and in a closed
    // loop each client spends that share of its cycle outside, so fewer are in the engine at once
    // (the fixed point of in_engine = clients x engine time / (engine time + overhead)).
    Roofline engine = r;
    engine.request_overhead_s = 0;
    double in_engine = sequences;
    SteadyState s = steady_state(engine, in_engine, m, open_loop);
    for (int i = 0; i < 50 && !open_loop && sequences > 0; ++i) {
      const double engine_s = std::max(in_engine, s.sequences) / s.requests_per_s;  // Little's law
      in_engine = sequences * engine_s / (engine_s + r.request_overhead_s);
      s = steady_state(engine, in_engine, m, open_loop);
    }
    s.ttft_s += r.request_overhead_s;
    return s;
  }
  const double out = std::max(1.0, m.out);
  const double in = std::max(0.0, m.in);
  const double limit = concurrency_limit(r, m.held_tokens);
  SteadyState s;
  s.sequences = std::min(sequences, limit);
  const double budget = r.prefill_chunk_tokens;
  s.prefill_steps = std::max(1.0, in / budget);
  // Little's law in steps: each request holds its slot for its prefill steps and out - 1 decode
  // steps, so s.sequences slots complete s.sequences / slot_steps requests per step; unless the
  // prefill budget cannot take that many prompts.
  const double slot_steps = s.prefill_steps + out - 1;
  s.completions_per_step = s.sequences / slot_steps;
  // An engine whose decodes share the budget (vLLM V1) leaves the prompts what its decodes do not take.
  const double per_request = in + (r.decodes_share_budget ? out - 1 : 0);
  if (in > 0 && s.completions_per_step * per_request > budget) {
    s.completions_per_step = budget / per_request;
    s.prefill_bound = true;
  }
  const double c = s.completions_per_step;
  const double decodes = c * (out - 1);
  const double prompt_budget = r.decodes_share_budget ? std::max(1.0, budget - decodes) : budget;
  const double decode_context = decodes * m.decode_context;
  // The steps are not alike: a request's prompt rides in its own prefill steps (chunks of the
  // budget) and the other steps only decode. With fewer than one prompt per step, the mean step
  // is that mix; with more, every step carries about c x in prompt tokens. Averaging the loads
  // instead would miss that a compute-bound prefill step is much longer than a decode step.
  // The prompts as the draws give them (a long prompt's step can be compute-bound where the mean
  // prompt's is not), else every prompt at the mean.
  const std::vector<std::pair<double, double>> prompts =
      m.prompts.empty() ? std::vector<std::pair<double, double>>{{in, 1.0}} : m.prompts;
  double chunks = 0;  // per request, on average
  for (const auto& [x, share] : prompts) chunks += share * std::ceil(std::max(1.0, x) / prompt_budget);
  double mean_step = 0, mean_square = 0, prefill_time = 0;
  // A request's first token comes at the end of its prefill steps, so its TPOT (first token to
  // last) holds only the other requests' prefill steps that fall among its decode steps: with
  // prompts in their own steps, per request cycle each of the other sequences prefills once; of
  // those steps the decode share is a step this request decodes in anyway, the rest (the prompt's
  // surplus) stretches its TPOT.
  double tpot = 0, first_token = 0;
  std::vector<std::pair<double, double>> steps;  // (step, share of the steps): the ITL's distribution
  if (!s.prefill_bound && c * chunks <= 1) {
    for (const auto& [x, share] : prompts)
      for (double start = 0; start < std::max(1.0, x); start += prompt_budget) {
        const double chunk = std::max(0.0, std::min(prompt_budget, x - start));
        const double t = step_seconds(r, {decodes, decode_context, chunk, chunk * (start + chunk / 2)});
        prefill_time += share * t;
        mean_square += c * share * t * t;
        steps.emplace_back(t, c * share);
      }
    const double decode_only = step_seconds(r, {decodes, decode_context, 0, 0});
    const double decode_steps = 1 - c * chunks;
    steps.emplace_back(decode_only, decode_steps);
    mean_step = c * prefill_time + decode_steps * decode_only;
    mean_square += decode_steps * decode_only * decode_only;
    // The cycle in the engine (Little's law: sequences per completion).
    const double cycle = s.sequences * mean_step / c;
    // A closed loop's clients drift apart on a continuous-batching engine, but their prompts still
    // meet: the others' prompt steps (beyond the decode steps they hold anyway) take a share rho of
    // the cycle, and a request waits through the queue share of them before its first token.
    first_token = prefill_time;
    if (!open_loop && r.queue_share > 0 && s.sequences > 1 && out > 1) {
      const double others = (s.sequences - 1) * std::max(0.0, prefill_time - chunks * decode_only);
      const double rho = std::clamp(others / cycle, 0.0, 0.95);
      const double k = std::clamp(r.queue_share, 0.0, 1.0);
      // At most the cycle less its decode steps alone.
      first_token = std::min(prefill_time * (1 - (1 - k) * rho) / (1 - rho), cycle - (out - 1) * decode_only);
      first_token = std::max(first_token, prefill_time);
    }
    tpot = out > 1 ? (cycle - first_token) / (out - 1) : mean_step;
  } else {
    // Every step carries prompts (others' prompts among this request's decode steps).
    mean_step = step_seconds(r, {decodes, decode_context, c * in, c * in * in / 2});
    mean_square = mean_step * mean_step;
    prefill_time = s.prefill_steps * mean_step;
    first_token = prefill_time;
    tpot = mean_step;
    steps.emplace_back(mean_step, 1);
  }
  // Multi-step scheduling: a burst of n steps delivers its tokens together at its end, so of every
  // n tokens n - 1 follow the one before at once and one after the whole burst.
  const double n = std::max(1.0, r.scheduler_steps);
  if (n > 1) {
    std::vector<std::pair<double, double>> bursts;
    for (const auto& [t, share] : steps) {
      bursts.emplace_back(0.0, share * (n - 1) / n);
      bursts.emplace_back(n * t, share / n);
    }
    steps = std::move(bursts);
  }
  // Every step decodes the same sequences on average, so a token's gap is a step drawn by share.
  std::sort(steps.begin(), steps.end());
  const auto itl_at = [&](double q) {
    double seen = 0;
    for (const auto& [t, share] : steps)
      if ((seen += share) >= q) return t;
    return steps.back().first;
  };
  s.itl_p50_s = itl_at(0.5);
  s.itl_p95_s = itl_at(0.95);
  s.itl_p99_s = itl_at(0.99);
  s.step_s = mean_step;
  s.prefill_s = prefill_time;
  s.tpot_s = tpot;
  s.requests_per_s = c / s.step_s;
  s.output_tokens_per_s = s.requests_per_s * out;
  if (open_loop) {
    // An arrival at a random instant waits for the step in progress to end: E[step^2] / (2 E[step]);
    // with bursts of n steps, for the burst in progress: (n - 1) / 2 decode steps more on average.
    s.ttft_s = prefill_time + mean_square / (2 * mean_step) + (n - 1) / 2 * mean_step;
  } else {
    // Closed loop: every client's request is in the system for clients / rate seconds.
    const double in_system = std::max(sequences, s.sequences) / s.requests_per_s;
    s.ttft_s = std::max(first_token, in_system - (out - 1) * s.tpot_s);
  }
  return s;
}

SteadyState steady_state_at_rate(const Roofline& r, double requests_per_s, double in, double out) {
  return steady_state_at_rate(r, requests_per_s, length_mix(r, in, out));
}

SteadyState steady_state_at_rate(const Roofline& r, double requests_per_s, const LengthMix& m) {
  const double limit = concurrency_limit(r, m.held_tokens);
  const SteadyState full = steady_state(r, limit, m, true);
  if (requests_per_s > full.requests_per_s * (1 + 1e-12))
    throw CostError("the rate " + std::to_string(requests_per_s) + " requests/s is above the replica's capacity of " +
                    std::to_string(full.requests_per_s));
  if (requests_per_s >= full.requests_per_s) return full;
  double lo = 0, hi = limit;
  for (int i = 0; i < 200 && hi - lo > 1e-9 * limit; ++i) {
    const double mid = (lo + hi) / 2;
    if (steady_state(r, mid, m, true).requests_per_s < requests_per_s) lo = mid;
    else hi = mid;
  }
  return steady_state(r, hi, m, true);
}

}  // namespace overhead::cost
