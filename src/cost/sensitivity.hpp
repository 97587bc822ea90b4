// Sensitivity of the blended $/1M tokens: the cost curve against utilization and against the
// replica's decode speed, each API price as a horizontal line with its break-even point on the
// curve, and the same workload priced on every shipped GPU profile for one model. The report and
// `overhead cost --plots` draw these; every point is a compute_cost() value, not a re-derivation.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cost/cost_model.hpp"

namespace overhead::cost {

struct CurvePoint {
  double x = 0;                          // utilization, or output tokens/s of the replica at full load
  double usd_per_1m_tokens_blended = 0;  // compute_cost at that x
};

struct ApiLine {
  std::string name;                      // preset name or "--api-price"
  double usd_per_1m_in = 0, usd_per_1m_out = 0;
  double usd_per_1m_tokens_blended = 0;  // over the workload's mix
  // Where the curve meets the line: the utilization (in (0, 1]) and the output tokens/s at full
  // load (at the given utilization) at which self-hosting costs the API's price. Empty: never.
  std::optional<double> break_even_utilization, break_even_output_tokens_per_s;
};

struct Sensitivity {
  std::vector<CurvePoint> by_utilization;  // x in (0, 1]
  std::vector<CurvePoint> by_decode;       // x = output tokens/s at full load, the GPU's speed scaled
  double utilization = 0;                  // the given one (the decode curve is at it)
  double profile_output_tokens_per_s = 0;  // x of the profile itself on the decode curve
  double profile_usd_per_1m_tokens_blended = 0;
  std::vector<ApiLine> apis;
};

// `points` per curve (>= 2). The decode curve scales the roofline's achieved FLOP/s and memory
// bandwidth together from 1/8x to 8x of the profile's (a faster or slower engine on the same
// memory); its x is the resulting output tokens/s at full load.
Sensitivity sensitivity(const CostInputs& in, const Workload& w, const std::vector<ApiLine>& apis, int points = 41);

// The output tokens/s of the replica at full load (utilization 1).
double full_load_output_tokens_per_s(const CostInputs& in, const Workload& w);

struct GpuRow {
  std::string gpu, description;
  int gpus = 0;                          // the fewest of 1, 2, 4, 8 that hold the weights
  double gpu_usd_per_hour = 0;           // per GPU, from the presets
  std::string price_kind;                // published / estimated
  std::optional<CostResult> cost;        // empty with `error` set
  std::string error;                     // no price, or the model fits on none of 1..8 GPUs
};

// The workload priced on every shipped GPU profile for `model` at `base`'s utilization, E and CPU
// price (base.gpu and base.gpu_usd_per_hour are replaced per row).
std::vector<GpuRow> gpu_table(const std::filesystem::path& profiles_dir, const ModelProfile& model,
                              const CostInputs& base, const Workload& w, const Prices& prices);

// The API lines for a list of preset names or "IN,OUT" pairs, blended over `w`.
ApiLine api_line(const std::string& name_or_pair, const Prices& prices, const Workload& w);

}  // namespace overhead::cost
