// Money: T = E(x) + D(y|x) per request, the instance's throughput at a utilization, $ per request
// and per 1M tokens, and the break-even against an API price. E is the non-GPU time (a fit from
// fits.json or typed in), paid at the CPU worker's price; D is the GPU time from the roofline.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cost/roofline.hpp"

namespace overhead::cost {

// E(x) = alpha + beta * input_tokens, in microseconds (the units of fits.json).
struct ELinear {
  double alpha_us = 0, beta_us_per_token = 0;
  std::string origin;  // where the coefficients came from
  double at(double input_tokens) const { return alpha_us + beta_us_per_token * input_tokens; }
};

// Read (alpha, beta) of model "a", target "cycle", method "ols" for `case_number` and `tokenizer`
// (empty: the first tokenizer of that case) from an `overhead analyze` fits.json.
ELinear e_from_fits(const std::string& fits_file, int case_number, const std::string& tokenizer);

// E as `cost` and `simulate` take it: typed in (`e_us`, "ALPHA,BETA" microseconds, --e-us), else
// from the fits.json select_fits picks among `fits` (fits_select.hpp), else 0. Throws CostError on
// a backend without fits.
ELinear choose_e(const std::string& e_us, const std::vector<std::string>& fits, const std::string& backend,
                 int case_number, const std::string& tokenizer);

// E with the batch-boundary term (model "b" of fits.json): alpha + alpha2 * turnover + beta * x, in
// microseconds; alpha2 is what the item whose cycle spans an input-batch turnover pays on top (the
// delete of its batch and the receive of the next, when no prefetch hides them).
struct EBatch {
  double alpha_us = 0, turnover_us = 0, beta_us_per_token = 0;
  std::string origin;
  double at(double input_tokens, bool turnover) const {
    return alpha_us + (turnover ? turnover_us : 0) + beta_us_per_token * input_tokens;
  }
};

// Model "b", target "cycle", method "ols" per tokenizer of `case_number` (tokenizer -> fit).
std::vector<std::pair<std::string, EBatch>> e_batch_from_fits(const std::string& fits_file, int case_number);

struct Workload {
  std::vector<double> input_tokens, output_tokens;  // one pair per request
};

// "in=N,out=M" (the --workload flag) -> one request of N input and M output tokens. Both at least
// 1: a prompt holds a token, and a request answers at least its first token (out=0 priced a request
// that produces nothing, at 0 $ per 1M tokens).
Workload parse_workload(const std::string& text);

// Throws CostError naming `flag` when E(x) is negative or not finite for a request of the workload
// (E is a time: --e-us -1000,0 priced a negative CPU time and negative workers).
void check_e(const ELinear& e, const Workload& w, const std::string& flag);
// "A,B" -> two numbers; `what` names the flag in the error.
std::pair<double, double> parse_number_pair(const std::string& text, const char* what);

// How the fleet is loaded: at a share of its capacity (open loop), at its capacity, or with a
// fixed number of requests in flight (closed loop: each client sends its next when one ends).
enum class LoadMode { utilization, max_throughput, concurrency };

struct CostInputs {
  Roofline gpu;                 // one replica
  int replicas = 1;             // data-parallel replicas: --gpus / --tp
  ServingOptions serving;       // what built `gpu` (for pricing the same on other GPUs)
  LoadMode mode = LoadMode::utilization;
  double concurrency = 0;       // with LoadMode::concurrency: requests in flight over the fleet
  ELinear e;
  double gpu_usd_per_hour = 0;  // per GPU
  double cpu_usd_per_hour = 0;  // per CPU worker
  double utilization = 0.5;     // with LoadMode::utilization: share of the fleet's capacity in use, (0, 1]
  // One replica's capacity, requests/s, where the steady state over-counts it: an engine that
  // reserves less than its requests' output preempts at its KV limit and computes the preempted
  // again, work the steady state does not see (pricing.cpp gives the step simulation's). Caps
  // every operating point; empty: the steady state's.
  std::optional<double> replica_capacity_requests_per_s;
  std::optional<std::pair<double, double>> api_usd_per_1m;  // input, output
};

struct Percentiles {
  double mean = 0, p50 = 0, p95 = 0, p99 = 0;
};

struct CostResult {
  Percentiles e_s, d_s, t_s;
  Percentiles ttft_s, tpot_s;  // E + the engine's time to the first token; the step time
  Percentiles itl_s;           // inter-token latency, per token: the steps in their shares
  double e_share = 0;  // mean E / mean T
  double batch = 0;    // steady running sequences per replica
  double batch_limit = 0;  // the most that fit: the engine cap or the KV cache
  double utilization = 0;  // the operating point's share of the fleet's capacity
  double capacity_requests_per_s = 0;  // the fleet at its capacity
  bool prefill_bound = false;
  double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0;  // the fleet, at the operating point
  double mean_input_tokens = 0, mean_output_tokens = 0;
  double cpu_workers = 0;  // workers needed to keep E up with the GPU at the utilization
  double usd_per_request = 0, usd_per_1m_input_tokens = 0, usd_per_1m_output_tokens = 0,
         usd_per_1m_tokens_blended = 0;
  std::optional<double> api_usd_per_1m_tokens_blended, break_even_utilization;
  double break_even_api_price = 0;  // the blended API price that this utilization matches
};

// $/request at utilization U: (GPU $/h x tp / (capacity x U) + CPU $/h x E) / 3600, where
// capacity is requests/s of one replica at its steady state with the most sequences that fit; the
// CPU side scales with E, not with U, because idle workers can be scaled away while a GPU replica
// cannot be split. The operating point (U, or the load of a concurrency) comes from steady_state.
// Throws CostError when the largest request of the workload cannot fit the KV cache, E is negative
// (check_e), or the profiles give no finite price (a GPU of next to no bandwidth or compute).
CostResult compute_cost(const CostInputs& in, const Workload& w);

}  // namespace overhead::cost
