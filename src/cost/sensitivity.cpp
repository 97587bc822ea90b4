#include "cost/sensitivity.hpp"

#include <cmath>

#include "cost/pricing.hpp"

namespace overhead::cost {
namespace {

// A GPU `factor` times as fast: its achieved FLOP/s and memory bandwidth both scaled, so decode
// speeds up whichever of the two bounds a step (memory and batch are unchanged).
CostInputs with_speed_factor(const CostInputs& in, double factor) {
  CostInputs out = in;
  out.mode = LoadMode::utilization;
  out.gpu.bytes_per_s *= factor;
  out.gpu.flops_per_s *= factor;
  out.gpu.attention_flops_per_s *= factor;
  return out;
}

double blended(const CostInputs& in, const Workload& w) { return compute_cost(in, w).usd_per_1m_tokens_blended; }

double blended_price(double p_in, double p_out, const Workload& w) {
  double in = 0, out = 0;
  for (double x : w.input_tokens) in += x;
  for (double y : w.output_tokens) out += y;
  return in + out > 0 ? (in * p_in + out * p_out) / (in + out) : 0;
}

// The speed factor in [lo, hi] at which the blended cost equals `price` (the cost does not rise
// with speed), by bisection in log space; empty when even `hi` costs more.
std::optional<double> factor_at_price(const CostInputs& in, const Workload& w, double price, double lo, double hi) {
  if (blended(with_speed_factor(in, hi), w) > price) return std::nullopt;
  if (blended(with_speed_factor(in, lo), w) <= price) return lo;
  for (int i = 0; i < 100; ++i) {
    const double mid = std::sqrt(lo * hi);
    if (blended(with_speed_factor(in, mid), w) > price) lo = mid;
    else hi = mid;
    if (hi / lo < 1 + 1e-12) break;
  }
  return hi;
}

}  // namespace

double full_load_output_tokens_per_s(const CostInputs& in, const Workload& w) {
  CostInputs full = in;
  full.mode = LoadMode::utilization;
  full.utilization = 1;
  return compute_cost(full, w).output_tokens_per_s;
}

ApiLine api_line(const std::string& name_or_pair, const Prices& prices, const Workload& w) {
  ApiLine line;
  line.name = name_or_pair;
  const ApiPrice price = api_price(name_or_pair, prices);
  line.usd_per_1m_in = price.usd_per_1m_input;
  line.usd_per_1m_out = price.usd_per_1m_output;
  line.usd_per_1m_tokens_blended = blended_price(line.usd_per_1m_in, line.usd_per_1m_out, w);
  return line;
}

Sensitivity sensitivity(const CostInputs& in, const Workload& w, const std::vector<ApiLine>& apis, int points) {
  if (points < 2) throw CostError("sensitivity: at least 2 points per curve");
  Sensitivity s;
  s.utilization = in.utilization;
  // Utilization from 1/points to 1 in equal steps (0 itself costs infinitely much).
  for (int i = 1; i <= points; ++i) {
    CostInputs at = in;
    at.mode = LoadMode::utilization;
    at.utilization = static_cast<double>(i) / points;
    s.by_utilization.push_back({at.utilization, blended(at, w)});
  }
  constexpr double kLow = 0.125, kHigh = 8;
  for (int i = 0; i < points; ++i) {
    const double f = kLow * std::pow(kHigh / kLow, static_cast<double>(i) / (points - 1));
    const CostInputs at = with_speed_factor(in, f);
    s.by_decode.push_back({full_load_output_tokens_per_s(at, w), blended(at, w)});
  }
  s.profile_output_tokens_per_s = full_load_output_tokens_per_s(in, w);
  s.profile_usd_per_1m_tokens_blended = blended(in, w);
  for (ApiLine line : apis) {
    CostInputs priced = in;
    priced.api_usd_per_1m = {line.usd_per_1m_in, line.usd_per_1m_out};
    const auto r = compute_cost(priced, w);
    if (r.break_even_utilization && *r.break_even_utilization <= 1) line.break_even_utilization = r.break_even_utilization;
    // A wide range, so that a break-even far off the plotted curve is still reported.
    if (const auto f = factor_at_price(in, w, line.usd_per_1m_tokens_blended, 1e-3, 1e3))
      line.break_even_output_tokens_per_s = full_load_output_tokens_per_s(with_speed_factor(in, *f), w);
    s.apis.push_back(line);
  }
  return s;
}

std::vector<GpuRow> gpu_table(const std::filesystem::path& profiles_dir, const ModelProfile& model,
                              const CostInputs& base, const Workload& w, const Prices& prices) {
  std::vector<GpuRow> rows;
  double tokens = 0;
  for (std::size_t i = 0; i < w.input_tokens.size(); ++i) tokens += w.input_tokens[i] + w.output_tokens[i];
  tokens /= static_cast<double>(w.input_tokens.size());
  for (const auto& name : list_profiles(profiles_dir, "gpu")) {
    const GpuProfile gpu = load_gpu(name, profiles_dir);
    GpuRow row;
    row.gpu = gpu.name;
    row.description = gpu.description;
    const auto price = prices.instances.find(gpu.name);
    if (price == prices.instances.end()) {
      row.error = "no price preset";
      rows.push_back(row);
      continue;
    }
    row.gpu_usd_per_hour = price->second.usd_per_hour;
    row.price_kind = price->second.kind;
    for (int g : {1, 2, 4, 8}) {
      ServingOptions serving = base.serving;
      serving.tp = g;
      Roofline r;
      try {
        r = make_roofline(gpu, model, serving);
        concurrency_limit(r, tokens);
      } catch (const CostError&) {
        continue;  // the weights do not fit on g GPUs (or g GPUs have no interconnect)
      }
      CostInputs in = base;
      in.gpu = r;
      in.serving = serving;
      in.replicas = 1;
      in.gpu_usd_per_hour = row.gpu_usd_per_hour;
      row.gpus = g;
      row.cost = compute_cost(in, w);
      break;
    }
    if (!row.cost) row.error = "the weights do not fit on 8 GPUs";
    rows.push_back(row);
  }
  return rows;
}

}  // namespace overhead::cost
