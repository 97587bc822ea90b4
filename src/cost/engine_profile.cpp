#include "cost/engine_profile.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "cost/json_file.hpp"
#include "stats/errors.hpp"
#include "stats/ols.hpp"

namespace overhead::cost {

namespace {

double coefficient(const stats::OlsFit& f, const std::string& name) {
  for (const auto& c : f.coefficients)
    if (c.name == name) return c.estimate;
  return 0;
}

double number_at(const nlohmann::json& j, const std::string& path, const std::filesystem::path& file) {
  const nlohmann::json* at = &j;
  std::size_t from = 0;
  while (true) {
    const auto dot = path.find('.', from);
    const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!at->is_object() || !at->contains(key)) throw CostError(file.string() + ": missing field \"" + path + "\"");
    at = &(*at)[key];
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  if (!at->is_number() || !std::isfinite(at->get<double>()))
    throw CostError(file.string() + ": field \"" + path + "\" must be a finite number");
  return at->get<double>();
}

}  // namespace

EngineFit fit_engine(const std::vector<PrefillSample>& prefill, const std::vector<DecodeSample>& decode) {
  std::set<double> lengths;
  for (const auto& s : prefill) lengths.insert(s.prompt_tokens);
  if (lengths.size() < 3)
    throw CostError("too few prefill measurements to fit: " + std::to_string(lengths.size()) +
                    " prompt length(s), need 3 (give a longer --budget-s)");
  std::set<double> batches, contexts;
  for (const auto& s : decode) {
    batches.insert(s.batch);
    contexts.insert(std::round(s.context_tokens));
  }
  if (decode.size() < 4 || batches.size() < 2 || contexts.size() < 2)
    throw CostError("too few decode measurements to fit: " + std::to_string(decode.size()) + " generation(s) over " +
                    std::to_string(batches.size()) + " concurrency level(s), need 4 over 2 (give a longer --budget-s)");
  EngineFit fit;
  try {
    std::vector<double> y, x;
    for (const auto& s : prefill) {
      y.push_back(s.ttft_s);
      x.push_back(s.prompt_tokens);
    }
    const std::vector<stats::Regressor> pr = {{"prompt_tokens", x}};
    const auto f = stats::ols(y, pr);
    const double slope = coefficient(f, "prompt_tokens");
    if (!(slope > 0))
      throw CostError("the time to first token does not grow with the prompt (slope " + std::to_string(slope) +
                      " s/token): the measurements are too noisy to fit a prefill rate");
    fit.ttft_base_s = coefficient(f, "const");
    fit.prefill_tokens_per_s = 1 / slope;
    fit.prefill_r_squared = f.r_squared;
    fit.prefill_resid_sd_s = f.resid_sd;
    stats::residuals(y, pr, Eigen::Vector2d(fit.ttft_base_s, slope), fit.prefill_residuals_s);

    std::vector<double> t, b, bc;
    for (const auto& s : decode) {
      t.push_back(s.tpot_s);
      b.push_back(s.batch);
      bc.push_back(s.batch * s.context_tokens);
    }
    const std::vector<stats::Regressor> dr = {{"batch", b}, {"batch_context", bc}};
    const auto g = stats::ols(t, dr);
    fit.step_overhead_s = coefficient(g, "const");
    fit.sequence_overhead_s = coefficient(g, "batch");
    fit.context_s_per_token = coefficient(g, "batch_context");
    fit.decode_r_squared = g.r_squared;
    fit.decode_resid_sd_s = g.resid_sd;
    stats::residuals(t, dr, Eigen::Vector3d(fit.step_overhead_s, fit.sequence_overhead_s, fit.context_s_per_token),
                     fit.decode_residuals_s);
  } catch (const stats::StatsError& e) {
    throw CostError(std::string("cannot fit the engine: ") + e.what());
  }
  return fit;
}

Roofline roofline_from_profile(const EngineProfile& p) {
  Roofline r;
  r.gpus = 1;
  r.bytes_per_s = 1;
  r.flops_per_s = 1;
  r.memory_bytes = 1e300;  // unbounded: the engine's slots are the limit
  r.weight_bytes = 0;
  // A context token costs c seconds of the step; clamp a fitted negative to 0 (noise) so a step
  // never shrinks with more context.
  r.kv_bytes_per_token = std::max(0.0, p.fit.context_s_per_token);
  // The prefill rate as a time per prompt token, less the context term the bytes already charge
  // each prompt token (step_seconds counts prompt tokens' KV), so a step costs exactly
  // a + b decodes + c (decode context) + prompt tokens / rate.
  r.active_parameters = 0;
  r.prefill_s_per_token = std::max(0.0, 1 / p.fit.prefill_tokens_per_s - r.kv_bytes_per_token);
  r.attention_flops_per_context_token = 0;
  r.max_concurrency = std::max(1.0, p.max_concurrency);
  r.prefill_chunk_tokens = p.prefill_chunk_tokens;
  r.memory_fraction = 1;
  r.step_overhead_s = std::max(0.0, p.fit.step_overhead_s);
  r.sequence_overhead_s = std::max(0.0, p.fit.sequence_overhead_s);
  return r;
}

nlohmann::json engine_fit_json(const EngineFit& f) {
  return {{"ttft_base_s", f.ttft_base_s},
          {"prefill_tokens_per_s", f.prefill_tokens_per_s},
          {"step_overhead_s", f.step_overhead_s},
          {"sequence_overhead_s", f.sequence_overhead_s},
          {"context_s_per_token", f.context_s_per_token},
          {"prefill_r_squared", f.prefill_r_squared},
          {"decode_r_squared", f.decode_r_squared},
          {"prefill_resid_sd_s", f.prefill_resid_sd_s},
          {"decode_resid_sd_s", f.decode_resid_sd_s},
          {"prefill_residuals_s", f.prefill_residuals_s},
          {"decode_residuals_s", f.decode_residuals_s}};
}

EngineProfile load_engine_profile(const std::filesystem::path& file) {
  const nlohmann::json j = read_json_file(file);
  EngineProfile p;
  if (j.contains("engine") && j["engine"].is_string()) p.engine_url = j["engine"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) p.model = j["model"].get<std::string>();
  p.max_concurrency = number_at(j, "max_concurrency", file);
  if (j.contains("prefill_chunk_tokens")) p.prefill_chunk_tokens = number_at(j, "prefill_chunk_tokens", file);
  p.fit.ttft_base_s = number_at(j, "fit.ttft_base_s", file);
  p.fit.prefill_tokens_per_s = number_at(j, "fit.prefill_tokens_per_s", file);
  p.fit.step_overhead_s = number_at(j, "fit.step_overhead_s", file);
  p.fit.sequence_overhead_s = number_at(j, "fit.sequence_overhead_s", file);
  p.fit.context_s_per_token = number_at(j, "fit.context_s_per_token", file);
  if (!(p.fit.prefill_tokens_per_s > 0)) throw CostError(file.string() + ": fit.prefill_tokens_per_s must be > 0");
  if (!(p.max_concurrency >= 1)) throw CostError(file.string() + ": max_concurrency must be >= 1");
  if (!(p.prefill_chunk_tokens >= 1)) throw CostError(file.string() + ": prefill_chunk_tokens must be >= 1");
  return p;
}

}  // namespace overhead::cost
