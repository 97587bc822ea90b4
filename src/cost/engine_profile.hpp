// A measured engine (`overhead calibrate`): the samples taken on it, the fit of the server model
// to them, and the Roofline that fit stands for, so `cost` and `simulate` price an engine of
// unknown hardware with the same step_seconds() they use for datasheet GPUs.
//
// The fit, per engine of unknown hardware:
//   TTFT(prompt)              = ttft_base + p * prompt + q * prompt^2   (p: seconds per prompt token)
//   step(batch, context)      = a + b * batch + c * batch * context     (time per output token)
//     but a lone sequence's step is its own measured line in the context, and between the
//     calibrated batches the step is interpolated (EngineFit::decode_levels, DecodeTable in
//     roofline.hpp)
//   TTFT(prompt, C in step)   = TTFT(prompt) + k * (C - 1) * (step(C - 1, prompt) + p * prompt + q * prompt^2)
// The last: C requests sent together (the calibration's waves) are not prefilled at once; an
// engine takes their prompts in steps that also decode the ones already started (llama.cpp's
// server fills each step with the running sequences' tokens, then prompt tokens of the waiting
// ones in arrival order), so a request waits through a share k of the others' prefill steps
// (1/2 in arrival order). k is fitted to the mean TTFT of each (C, prompt), by least squares in
// seconds, and lies in [0, 1]: Roofline::queue_share.
// q is the prompt's attention (each prompt token attends to those before it). p and q are never
// negative: when the best fit would make one so, it is 0 and the other is fitted alone. Every fit
// takes the interquartile mean of each measured point (prompt length; batch and prompt length;
// concurrency and prompt): a request slowed by a neighbour on a shared machine does not pull the
// line (the quarters at each end are left out), and, unlike the median, a machine that spends part
// of the calibration at a slower pace moves the point by its share of the time rather than all or
// nothing (lone prompts on the tests' engine were 4 ms slower in some minutes than in others, and
// a median of nine switched between the two levels from one calibration to the next). The prefill
// and decode fits are in relative terms (each point's error over its value), so the short steps of
// small batches count as much as the long ones. The Roofline that reproduces them:
// step_overhead = a, sequence_overhead = b, no weights and no FLOPs, c "bytes" of KV per context
// token at 1 byte/s, p as Roofline::prefill_s_per_token and 2q per prompt token and
// context token as Roofline::prefill_s_per_context_token, and the decode levels as
// Roofline::decode_steps, so a step costs the decodes' step (the levels; a + b decodes + c (sum of
// their contexts) without them) + p prompt + q prompt^2, and the TTFT's base beyond a is
// Roofline::request_overhead_s (the request's HTTP exchange and tokenizing, outside the steps).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cost/roofline.hpp"

namespace overhead::cost {

// One prompt at concurrency 1: its tokens and the time to its first output token.
struct PrefillSample {
  double prompt_tokens = 0;
  double ttft_s = 0;
};

// One generation measured while `batch` generations were in flight (on average over its decode):
// its mean time per output token after the first and the mean context (prompt + half the output)
// it decoded at; `concurrency`: the requests sent together with it (0: batch).
struct DecodeSample {
  double batch = 0;
  double context_tokens = 0;
  double tpot_s = 0;
  double concurrency = 0;
  [[nodiscard]] double level() const { return concurrency > 0 ? concurrency : batch; }
};

// One request of a group of `concurrency` sent together: its time to first token.
struct ConcurrentTtftSample {
  double concurrency = 2;
  double prompt_tokens = 0;
  double ttft_s = 0;
};

struct EngineFit {
  double ttft_base_s = 0, prefill_s_per_token = 0, ttft_s_per_token_squared = 0;  // base, p, q
  double step_overhead_s = 0, sequence_overhead_s = 0, context_s_per_token = 0;  // a, b, c
  double queue_share = 0;       // k; 0 when no concurrent TTFT was measured
  // The decode step at each calibrated concurrency, which step_s() follows in place of a + b batch +
  // c batch context when it has any level: a lone sequence's own measured line in the context (its
  // context costs half what each of a batch's does on the tests' engine, which the line misfits),
  // and the line at the batch of each level of two or more. at_zero_s is a. Empty in profiles
  // written before it.
  DecodeTable decode_levels;
  std::size_t queue_points = 0; // the (concurrency, prompt) points k was fitted to
  double prefill_r_squared = 0, decode_r_squared = 0;
  double prefill_resid_sd_s = 0, decode_resid_sd_s = 0;
  std::vector<double> prefill_residuals_s, decode_residuals_s;  // every sample's, in the samples' order
  std::size_t prefill_points = 0, decode_points = 0;            // the points fitted

  [[nodiscard]] double ttft_s(double prompt_tokens) const {
    return ttft_base_s + prefill_s_per_token * prompt_tokens + ttft_s_per_token_squared * prompt_tokens * prompt_tokens;
  }
  [[nodiscard]] double step_s(double batch, double context) const {
    if (!decode_levels.empty()) return decode_levels.seconds(batch, context);
    return step_overhead_s + sequence_overhead_s * batch + context_s_per_token * batch * context;
  }
  // One of `concurrency` requests sent together, as above.
  [[nodiscard]] double concurrent_ttft_s(double concurrency, double prompt_tokens) const {
    return ttft_s(prompt_tokens) + queue_share * std::max(0.0, concurrency - 1) * other_prefill_step_s(concurrency, prompt_tokens);
  }
  // The step that prefills another request of the group: the prompt's share of the TTFT, and the
  // decodes of the group's other sequences.
  [[nodiscard]] double other_prefill_step_s(double concurrency, double prompt_tokens) const {
    return step_s(std::max(0.0, concurrency - 1), prompt_tokens) + ttft_s(prompt_tokens) - ttft_base_s;
  }
};

// Throws CostError when there are too few samples for a fit (3 prefill lengths, 4 decode points
// over at least two batch sizes and two contexts), the TTFT does not grow with the prompt, the
// step's fit has a negative slope per sequence or a time <= 0 at a measured point, or a fit's R^2
// is below 0 (a context term below 0, noise, is dropped: the step is fitted on the batch alone).
// R^2 is that of the points (each one's interquartile mean).
// `concurrent` (may be empty: k = 0) gives the queue share. `lone_decode` (may be empty): lone
// generations at more contexts (the calibration's lone prompts' tokens after their first), which
// join the waves' lone points in the lone sequence's own line, not the line of the batches.
EngineFit fit_engine(const std::vector<PrefillSample>& prefill, const std::vector<DecodeSample>& decode,
                     const std::vector<ConcurrentTtftSample>& concurrent = {},
                     const std::vector<DecodeSample>& lone_decode = {});

// The mean of the middle half of `v` (sorted, a quarter cut from each end); the median under 4
// values, 0 for none. What the fit takes of each measured point.
double interquartile_mean(std::vector<double> v);

// What `cost` and `simulate` read from a profile file.
struct EngineProfile {
  std::string engine_url, model;
  double max_concurrency = 1;       // the engine's slots (its /v1/models), else the largest concurrency calibrated
  double prefill_chunk_tokens = 2048;
  EngineFit fit;
};

// The Roofline described above (memory unbounded: the engine's own KV limit shows as its slots).
Roofline roofline_from_profile(const EngineProfile& p);

nlohmann::json engine_fit_json(const EngineFit& fit);
// Reads a profile written by `overhead calibrate`. Errors (CostError) name the file and field.
EngineProfile load_engine_profile(const std::filesystem::path& file);

}  // namespace overhead::cost
