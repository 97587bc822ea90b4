#include "cost/request_price.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cost/pricing.hpp"

namespace overhead::cost {
namespace {

std::string usd_per_hour_text(double usd_per_hour) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "$%.6g/h", usd_per_hour);
  return buf;
}

std::string preset_origin(const InstancePrice& p) { return "(" + p.kind + ", " + p.source + ", " + p.date + ")"; }

const InstancePrice& instance_preset(const Prices& prices, const std::string& name, const char* flag) {
  const auto it = prices.instances.find(name);
  if (it != prices.instances.end()) return it->second;
  std::string known;
  for (const auto& [n, p] : prices.instances) known += (known.empty() ? "" : ", ") + n;
  throw CostError(std::string(flag) + " " + name + ": no such instance price (known: " + known + ")");
}

}  // namespace

TokenRates token_rates(const Roofline& r, double in, double out) {
  in = std::max(0.0, in);
  const double o = std::max(1.0, out);
  const double limit = concurrency_limit(r, in + o);
  const SteadyState open = steady_state(r, limit, in, out, true);
  const SteadyState closed = steady_state(r, limit, in, out, false);
  const SteadyState& s = closed.requests_per_s > open.requests_per_s ? closed : open;
  const double total = 1 / s.requests_per_s;
  if (!std::isfinite(total) || !(total > 0))
    throw CostError("the profile gives no finite step time for a request of " + std::to_string(in) + " in / " +
                    std::to_string(out) + " out tokens");
  // The same step without its prompts: the decodes alone (a measured engine's request overhead
  // is outside the steps, as steady_state counts it).
  const double c = s.completions_per_step;
  const double decodes = c * (o - 1);
  Roofline engine = r;
  engine.request_overhead_s = 0;
  const double decode_only = step_seconds(engine, {decodes, decodes * (in + o / 2), 0, 0});
  const double prefill = in > 0 && c > 0 ? std::clamp((s.step_s - decode_only) / c, 0.0, total) : 0.0;
  return {in > 0 ? prefill / in : 0, (total - prefill) / o};
}

RequestPrices find_request_prices(const RequestPriceSpec& spec) {
  RequestPrices out;
  const Prices prices = load_prices(spec.engine.profiles_dir / "price" / "prices.json");
  std::string cpu_source, gpu_source, d_source;

  if (!spec.cpu_instance.empty() && spec.cpu_usd_per_vcpu_hour >= 0)
    throw CostError("give one of --price-instance and --price-cpu-usd-per-hour");
  if (!spec.cpu_instance.empty()) {
    const InstancePrice& p = instance_preset(prices, spec.cpu_instance, "--price-instance");
    if (!(p.vcpus > 0))
      throw CostError("--price-instance " + spec.cpu_instance +
                      ": the preset gives no vCPUs to divide its price by (give --price-cpu-usd-per-hour)");
    out.cpu_usd_per_s = p.usd_per_hour / p.vcpus / 3600;
    char vcpus[32];
    std::snprintf(vcpus, sizeof vcpus, "%g", p.vcpus);
    cpu_source = "cpu: " + spec.cpu_instance + " " + usd_per_hour_text(p.usd_per_hour) + " / " + vcpus + " vCPUs " + preset_origin(p);
  } else if (spec.cpu_usd_per_vcpu_hour >= 0) {
    out.cpu_usd_per_s = spec.cpu_usd_per_vcpu_hour / 3600;
    cpu_source = "cpu: " + usd_per_hour_text(spec.cpu_usd_per_vcpu_hour) + " per vCPU (--price-cpu-usd-per-hour)";
  }

  const ScenarioSpec& e = spec.engine;
  if (!e.engine_profile.empty() || (!e.gpu.empty() && !e.model.empty())) {
    // The replica and its price exactly as `overhead cost` makes them.
    const Scenario s = make_scenario(e);
    out.replica = s.replica;
    out.gpu_usd_per_s = s.gpu_usd_per_hour * s.replica.gpus / 3600;
    gpu_source = "gpu: " + (e.engine_profile.empty() ? s.gpu.name + " " : std::string()) + usd_per_hour_text(s.gpu_usd_per_hour) +
                 (s.replica.gpus > 1 ? " x " + std::to_string(static_cast<int>(s.replica.gpus)) + " GPUs per replica" : "") +
                 " (" + s.gpu_price_source + ")";
    d_source = e.engine_profile.empty() ? "D from the profile " + s.model.name + "@" + s.gpu.name + " (engine " +
                                              s.serving.engine.origin + ")"
                                        : "D from the engine profile " + e.engine_profile;
    if (!spec.reference_workload.empty()) {
      const Workload w = parse_workload(spec.reference_workload);
      out.reference = std::pair{w.input_tokens.front(), w.output_tokens.front()};
      d_source += " at the engine's capacity for requests of " + spec.reference_workload;
    } else {
      d_source += " at the engine's capacity for the mean request priced so far";
    }
  } else if (!e.model.empty()) {
    throw CostError("--model needs --gpu (or --engine-profile in their place)");
  } else if (!e.gpu.empty() || e.gpu_usd_per_hour >= 0) {
    if (!spec.reference_workload.empty()) throw CostError("--price-workload needs a profile (--gpu and --model, or --engine-profile)");
    if (e.gpu_usd_per_hour >= 0) {
      out.gpu_usd_per_s = e.gpu_usd_per_hour / 3600;
      gpu_source = "gpu: " + (e.gpu.empty() ? std::string() : e.gpu + " ") + usd_per_hour_text(e.gpu_usd_per_hour) +
                   " (--price-gpu-usd-per-hour)";
    } else {
      const GpuProfile g = load_gpu(e.gpu, e.profiles_dir);
      const InstancePrice& p = instance_preset(prices, g.name, "--gpu");
      out.gpu_usd_per_s = p.usd_per_hour / 3600;
      gpu_source = "gpu: " + g.name + " " + usd_per_hour_text(p.usd_per_hour) + " " + preset_origin(p);
    }
    d_source = "D from the measured share of the engine's time (decode time / generations in flight at once)";
  }
  for (const std::string* part : {&cpu_source, &gpu_source, &d_source})
    if (!part->empty()) out.source += (out.source.empty() ? "" : "; ") + *part;
  return out;
}

RequestCost RequestPricer::price(const RequestUse& use) const {
  RequestCost c;
  c.e_usd = p_.cpu_usd_per_s * std::max(0.0, use.cpu_s);
  if (!use.decoded || !(p_.gpu_usd_per_s > 0)) return c;
  const double in = std::max(0.0, use.input_tokens), out = std::max(0.0, use.output_tokens);
  std::optional<TokenRates> rates;
  if (p_.replica) {
    std::lock_guard lock(mutex_);
    std::pair<double, double> at;
    if (p_.reference) {
      at = *p_.reference;
    } else {
      // The engine serves the mix of requests, not each one alone: its operating point is that of
      // the mean request, which the requests priced so far estimate (this one included).
      ++seen_;
      input_sum_ += in;
      output_sum_ += out;
      at = {input_sum_ / static_cast<double>(seen_), output_sum_ / static_cast<double>(seen_)};
    }
    // The server model is asked again only when the mean moved by more than a thousandth.
    const auto moved = [](double now, double then) { return std::abs(now - then) > 1e-3 * std::max(1.0, then); };
    if (!have_rates_ || moved(at.first, rates_at_.first) || moved(at.second, rates_at_.second)) {
      try {
        rates_ = token_rates(*p_.replica, at.first, at.second);
      } catch (const CostError&) {
        rates_.reset();
      }
      have_rates_ = true;
      rates_at_ = at;
    }
    rates = rates_;
  }
  if (rates) {
    c.d_usd = p_.gpu_usd_per_s * (rates->per_input_token_s * in + rates->per_output_token_s * out);
  } else {
    // No profile (or a mean request it cannot hold): the measured share of the engine's time.
    c.d_usd = p_.gpu_usd_per_s * std::max(0.0, use.engine_share_s);
  }
  return c;
}

}  // namespace overhead::cost
