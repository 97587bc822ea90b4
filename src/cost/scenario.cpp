#include "cost/scenario.hpp"

#include "cost/engine_profile.hpp"

namespace overhead::cost {

namespace {

// The CPU price: the flag, else the m7i.large preset.
void set_cpu_price(Scenario& s, const ScenarioSpec& spec) {
  s.cpu_usd_per_hour = spec.cpu_usd_per_hour;
  s.cpu_price_source = "--cpu-usd-per-hour";
  if (s.cpu_usd_per_hour < 0) {
    const auto it = s.prices.instances.find("m7i.large");
    if (it == s.prices.instances.end()) throw CostError("no price preset m7i.large: give --cpu-usd-per-hour");
    s.cpu_usd_per_hour = it->second.usd_per_hour;
    s.cpu_price_source = "m7i.large preset";
  }
}

// No GPU price where only latency is asked: the $ figures are 0 and not printed.
void unpriced(Scenario& s) {
  s.priced = false;
  s.gpu_usd_per_hour = 0;
  s.gpu_price_source = "no price given (latency only)";
}

Scenario profile_scenario(const ScenarioSpec& spec) {
  if (!spec.gpu.empty() || !spec.model.empty())
    throw CostError("--engine-profile replaces --gpu and --model: give one or the other");
  if (spec.tp > 1) throw CostError("--engine-profile is one measured replica: --tp does not apply");
  if (spec.gpu_usd_per_hour < 0 && spec.instance.empty() && !spec.price_optional)
    throw CostError("--engine-profile needs the engine's price: give --gpu-usd-per-hour or --instance");
  if (spec.gpu_usd_per_hour >= 0 && !spec.instance.empty())
    throw CostError("give one of --gpu-usd-per-hour and --instance");
  const EngineProfile p = load_engine_profile(spec.engine_profile);
  Scenario s;
  s.prices = load_prices(spec.profiles_dir / "price" / "prices.json");
  s.gpu_usd_per_hour = spec.gpu_usd_per_hour;
  s.gpu_price_source = "--gpu-usd-per-hour";
  if (spec.gpu_usd_per_hour < 0 && spec.instance.empty()) unpriced(s);
  if (!spec.instance.empty()) {
    const auto it = s.prices.instances.find(spec.instance);
    if (it == s.prices.instances.end()) {
      std::string known;
      for (const auto& [name, price] : s.prices.instances) known += (known.empty() ? "" : ", ") + name;
      throw CostError("--instance " + spec.instance + ": no such instance price (known: " + known + ")");
    }
    s.gpu_usd_per_hour = it->second.usd_per_hour;
    s.gpu_price_source = spec.instance + " preset";
  }
  s.gpu.name = "engine " + (p.engine_url.empty() ? spec.engine_profile : p.engine_url);
  s.gpu.description = "measured by overhead calibrate (" + spec.engine_profile + ")";
  s.model.name = p.model;
  s.model.description = "as served by the measured engine";
  s.serving.tp = 1;
  s.serving.engine.origin = spec.engine_profile;
  s.serving.engine.step_overhead_s = p.fit.step_overhead_s;
  s.serving.engine.sequence_overhead_s = p.fit.sequence_overhead_s;
  s.serving.engine.max_batch = p.max_concurrency;
  s.serving.engine.prefill_chunk_tokens = p.prefill_chunk_tokens;
  s.serving.engine.memory_fraction = 1;
  s.replica = roofline_from_profile(p);
  if (spec.max_batch > 0) s.replica.max_concurrency = s.serving.engine.max_batch = spec.max_batch;
  if (spec.prefill_chunk_tokens > 0) s.replica.prefill_chunk_tokens = s.serving.engine.prefill_chunk_tokens = spec.prefill_chunk_tokens;
  if (!spec.engine_preset.empty()) throw CostError("--engine-profile is a measured engine: --engine-preset does not apply");
  s.replicas = spec.gpus;
  set_cpu_price(s, spec);
  return s;
}

}  // namespace

std::string kv_dtype_for(const ScenarioSpec& spec) {
  if (!spec.kv_dtype.empty()) return spec.kv_dtype;
  return spec.precision == "fp8" || spec.precision == "fp4" ? "fp8" : "bf16";
}

Scenario make_scenario(const ScenarioSpec& spec) {
  if (!spec.engine_profile.empty()) return profile_scenario(spec);
  if (spec.gpu.empty() || spec.model.empty()) throw CostError("--gpu and --model are required (see `overhead cost --list`)");
  if (spec.gpus < 1) throw CostError("--gpus must be at least 1");
  const int tp = spec.tp > 0 ? spec.tp : spec.gpus;
  if (spec.gpus % tp != 0)
    throw CostError("--gpus " + std::to_string(spec.gpus) + " is not a multiple of --tp " + std::to_string(tp) +
                    " (replicas = gpus / tp)");
  Scenario s;
  s.prices = load_prices(spec.profiles_dir / "price" / "prices.json");
  s.gpu = load_gpu(spec.gpu, spec.profiles_dir);
  s.model = load_model(spec.model, spec.profiles_dir);
  const auto engine_file = spec.engine_file.empty() ? default_engine_file(spec.profiles_dir)
                                                    : std::filesystem::path(spec.engine_file);
  s.serving.engine = std::filesystem::exists(engine_file) || !spec.engine_file.empty() ? load_engine_params(engine_file)
                                                                                         : EngineParams{};
  if (!spec.engine_preset.empty()) {
    s.preset = apply_engine_preset(spec.engine_preset, default_engines_dir(spec.profiles_dir),
                                   {s.gpu.name, s.gpu.memory_gb.value * 1.0, tp}, s.serving.engine);
    // The preset's engine at the efficiency its own published results were fitted to (the factor
    // the calibration checks it with), on the shipped base fit only: an --engine file is one's own.
    const auto factors_file = default_engine_factors_file(spec.profiles_dir);
    if (spec.engine_file.empty() && std::filesystem::exists(factors_file)) {
      const auto factors = load_engine_factors(factors_file);
      if (const auto f = factors.find(s.preset.name); f != factors.end())
        apply_engine_factor(s.serving.engine, f->second, factors_file.string());
    }
  }
  if (spec.max_batch > 0) s.serving.engine.max_batch = spec.max_batch;
  if (spec.prefill_chunk_tokens > 0) s.serving.engine.prefill_chunk_tokens = spec.prefill_chunk_tokens;
  if (spec.memory_fraction > 0) s.serving.engine.memory_fraction = spec.memory_fraction;
  if (spec.scheduler_steps > 0) s.serving.engine.scheduler_steps = spec.scheduler_steps;
  if (!(s.serving.engine.max_batch >= 1))
    throw CostError("--engine-preset " + spec.engine_preset + " leaves the batch cap to the deployment: give --max-batch");
  s.serving.tp = tp;
  s.serving.precision = spec.precision;
  s.serving.kv_dtype = kv_dtype_for(spec);
  s.replica = make_roofline(s.gpu, s.model, s.serving);
  kv_capacity_tokens(s.replica);  // the weights must fit
  s.replicas = spec.gpus / tp;
  s.gpu_usd_per_hour = spec.gpu_usd_per_hour;
  s.gpu_price_source = "--gpu-usd-per-hour";
  if (s.gpu_usd_per_hour < 0) {
    const auto it = s.prices.instances.find(s.gpu.name);
    if (it == s.prices.instances.end() && spec.price_optional) {
      unpriced(s);
    } else {
      if (it == s.prices.instances.end()) throw CostError("no price preset for " + s.gpu.name + ": give --gpu-usd-per-hour");
      s.gpu_usd_per_hour = it->second.usd_per_hour;
      s.gpu_price_source = it->second.kind + ", " + it->second.source + " (" + it->second.date + ")";
    }
  }
  set_cpu_price(s, spec);
  return s;
}

}  // namespace overhead::cost
