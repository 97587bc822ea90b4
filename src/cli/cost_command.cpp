// `overhead cost`: T = E(x) + D(y|x) per request, $ per request and per 1M tokens at a utilization,
// and the break-even against an API price, from the shipped profiles (data/profiles/) and an E fit.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "cli/cost_command_serving.hpp"
#include "cli/option_checks.hpp"
#include "cli/cost_command_workload.hpp"
#include "cost/cost_model.hpp"
#include "cost/fits_select.hpp"
#include "cost/length_distribution.hpp"
#include "cost/pricing.hpp"
#include "report/cost_section.hpp"

namespace overhead::cli {

namespace {

// The deployment, the load, the workload and the API prices live in `pricing`, which the plots
// (the report's cost section) read as they are; the rest says where E comes from.
struct CostOptions {
  cost::PricingOptions pricing;
  std::vector<std::string> fits;
  std::string backend, tokenizer, e_us, plots, workload_tokenizer = "llama-3.3-70b-instruct";
  int case_number = 5;
  bool json = false, list = false;
  std::size_t load_modes = 0;  // load flags given (at most one)
};

void print_list(const CostOptions& o) {
  const auto& profiles_dir = o.pricing.scenario.profiles_dir;
  for (const char* kind : {"gpu", "model"}) {
    std::printf("%s profiles:\n", kind);
    for (const auto& name : cost::list_profiles(profiles_dir, kind)) {
      if (std::string(kind) == "gpu") {
        const auto g = cost::load_gpu(name, profiles_dir);
        std::printf("  %-14s %6.0f GB %7.0f GB/s %6.0f/%5.0f/%5.0f TFLOP/s (BF16/FP8/FP4 dense)  %s\n", name.c_str(),
                    g.memory_gb.value, g.bandwidth_gb_per_s.value, g.peak_tflops.value, g.peak_for("fp8"),
                    g.peak_for("fp4"), g.description.c_str());
      } else {
        const auto m = cost::load_model(name, profiles_dir);
        std::printf("  %-14s %6.1fB params (%5.1fB active) %7.0f KV B/token  %s\n", name.c_str(),
                    m.parameters.value / 1e9, m.active_parameters.value / 1e9, m.kv_bytes_per_token.value,
                    m.description.c_str());
      }
    }
  }
  std::printf("engine presets (--engine-preset NAME[@VERSION], data/engines/NAME.json):\n");
  for (const auto& name : cost::list_engine_presets(cost::default_engines_dir(profiles_dir)))
    std::printf("  %s\n", name.c_str());
  std::printf("length distributions (--workload NAME[,in=N,out=M], data/workloads/NAME.json):\n");
  const auto workloads_dir = cost::default_workloads_dir(profiles_dir);
  for (const auto& name : cost::list_length_distributions(workloads_dir))
    if (const auto d = cost::load_length_distribution(name, workloads_dir))
      std::printf("  %-14s mean %.1f in (%.0f..%.0f), %.1f out (%.0f..%s%.0f), exponential\n", name.c_str(), d->input.mean,
                  d->input.min, d->input.max, d->output.mean, d->output.min, d->output.of_total ? "in + out <= " : "",
                  d->output.max);
  std::printf("model aliases (the same architecture):\n");
  for (const auto& [name, alias] : cost::load_model_aliases(profiles_dir))
    std::printf("  %-18s = %s\n", name.c_str(), alias.profile.c_str());
  const auto prices = cost::load_prices(profiles_dir / "price" / "prices.json");
  std::printf("instance prices ($/hour):\n");
  for (const auto& [name, p] : prices.instances)
    std::printf("  %-14s %8.4f  %s, %s (%s)\n", name.c_str(), p.usd_per_hour, p.kind.c_str(), p.source.c_str(),
                p.date.c_str());
  std::printf("API prices ($/1M input, output tokens):\n");
  for (const auto& [name, p] : prices.apis)
    std::printf("  %-14s %6.3f %6.3f  %s, %s (%s)\n", name.c_str(), p.usd_per_1m_input, p.usd_per_1m_output,
                p.kind.c_str(), p.source.c_str(), p.date.c_str());
}

// --plots DIR: the sensitivity plots and the GPU table (the report's cost section) as files.
void write_plots(const CostOptions& o, const cost::ELinear& e, const cost::Workload& w, const std::string& workload_origin) {
  const auto section = report::cost_section(report::cost_view(o.pricing, e, w, workload_origin));
  for (const auto& f : section.figures) write_output_file(o.plots, f.name + ".svg", report::svg_file(f));
  for (const auto& t : section.tables) write_output_file(o.plots, t.name + ".csv", report::to_csv(t));
  write_output_file(o.plots, "cost.md", section.markdown);
}

// The inputs with the first API price (a preset name or IN,OUT), for the break-even; `source`
// says where it came from.
cost::CostInputs api_priced(cost::CostInputs in, const std::vector<std::string>& api_prices, const cost::Prices& prices,
                            std::string& source) {
  if (api_prices.empty()) return in;
  const std::string& api = api_prices.front();
  bool preset = false;
  const cost::ApiPrice price = cost::api_price(api, prices, &preset);
  in.api_usd_per_1m = {price.usd_per_1m_input, price.usd_per_1m_output};
  if (preset) {
    source = price.kind + ", " + price.source + " (" + price.date + ")";
  } else {
    if (!(price.usd_per_1m_input >= 0 && price.usd_per_1m_output >= 0))
      throw cost::CostError("--api-price " + api + ": a price is >= 0 $ per 1M tokens");
    source = "--api-price";
  }
  return in;
}

// The steady state's TTFT or TPOT: mean, p50 and p99 (one value for a single-request workload).
nlohmann::json steady_json(const cost::Percentiles& p) { return {{"mean", p.mean}, {"p50", p.p50}, {"p99", p.p99}}; }

// --max-rate: the rate found (the same search as `simulate --max-rate`) and the simulated
// latencies there, beside the steady state that prices it.
nlohmann::json max_rate_json(const cost::MaxRate& m, const cost::LoadSpec& load) {
  return {{"requests_per_s", m.rate}, {"ttft_p99_ms", load.targets.ttft_p99_ms}, {"tpot_p99_ms", load.targets.tpot_p99_ms},
          {"simulations", m.simulations}, {"requests", load.requests}, {"seed", load.seed},
          {"simulated_requests_per_s", m.at.requests_per_s}, {"simulated_output_tokens_per_s", m.at.output_tokens_per_s},
          {"simulated_ttft_s", percentiles_json(m.at.ttft_s)}, {"simulated_tpot_s", percentiles_json(m.at.tpot_s)}};
}

// --offline: the run's own latencies and rates (every request queued at 0), priced at its rate.
void offline_figures(const cost::SimResult& run, cost::CostResult& r) {
  r.ttft_s = run.ttft_s;
  r.tpot_s = run.tpot_s;
  r.itl_s = run.itl_s;
  r.output_tokens_per_s = run.output_tokens_per_s;
  r.input_tokens_per_s = run.requests_per_s * r.mean_input_tokens;
  r.requests_per_s = run.requests_per_s;
}

int run_cost(const CostOptions& o) {
  try {
    if (o.list) {
      print_list(o);
      return 0;
    }
    if (o.load_modes > 1)
      throw cost::CostError("give one of --utilization, --max-throughput, --concurrency, --rate, --offline and --max-rate");
    if (o.pricing.load.in_step && o.pricing.load.mode != cost::Load::concurrency)
      throw cost::CostError("--in-step needs --concurrency (clients in a closed loop)");
    const cost::Scenario scenario = cost::make_scenario(o.pricing.scenario);
    const auto& gpu = scenario.gpu;
    const auto& model = scenario.model;
    const auto& prices = scenario.prices;

    const cost::ELinear e = cost::choose_e(o.e_us, o.fits, o.backend, o.case_number, o.tokenizer);
    const std::string& gpu_price_source = scenario.gpu_price_source;
    std::string api_source;
    std::string workload_origin;
    const cost::Workload workload = load_workload(
        o.pricing.workload, o.workload_tokenizer, workload_origin,
        {cost::default_workloads_dir(o.pricing.scenario.profiles_dir),
         o.pricing.load.mode == cost::Load::offline ? o.pricing.load.requests : std::size_t{10000}, o.pricing.load.seed});
    cost::check_e(e, workload, !o.e_us.empty() ? "--e-us" : "--fits");
    const cost::PricedLoad priced = cost::price_load(scenario, o.pricing.load, e, workload);
    const cost::CostInputs in = api_priced(priced.inputs, o.pricing.api_prices, prices, api_source);
    auto r = cost::compute_cost(in, workload);
    if (priced.offline_run) offline_figures(*priced.offline_run, r);
    if (!o.plots.empty()) write_plots(o, e, workload, workload_origin);

    if (o.json) {
      const char* mode = cost::load_name(o.pricing.load.mode);
      nlohmann::json j = {{"gpu", gpu.name}, {"model", model.name}, {"gpus", o.pricing.scenario.gpus},
                          {"tp", scenario.serving.tp}, {"replicas", scenario.replicas},
                          {"precision", scenario.serving.precision.empty() ? model.precision : scenario.serving.precision},
                          {"kv_dtype", scenario.serving.kv_dtype}, {"mode", mode},
                          {"ttft_s", steady_json(r.ttft_s)}, {"tpot_s", steady_json(r.tpot_s)},
                          {"itl_s", steady_json(r.itl_s)},
                          {"batch_limit", r.batch_limit}, {"prefill_bound", r.prefill_bound},
                          {"capacity_requests_per_s", r.capacity_requests_per_s},
                          {"engine", engine_json(scenario.serving.engine, in.gpu)},
                          {"engine_preset", preset_json(scenario.preset)},
                          {"gpu_usd_per_hour", in.gpu_usd_per_hour}, {"cpu_usd_per_hour", in.cpu_usd_per_hour},
                          {"utilization", r.utilization}, {"e_origin", in.e.origin}, {"workload", workload_origin},
                          {"requests_in_workload", workload.input_tokens.size()},
                          {"e_alpha_us", in.e.alpha_us}, {"e_beta_us_per_token", in.e.beta_us_per_token},
                          {"e_s", percentiles_json(r.e_s)}, {"d_s", percentiles_json(r.d_s)},
                          {"t_s", percentiles_json(r.t_s)}, {"e_share", r.e_share}, {"batch", r.batch},
                          {"requests_per_s", r.requests_per_s}, {"input_tokens_per_s", r.input_tokens_per_s},
                          {"output_tokens_per_s", r.output_tokens_per_s}, {"cpu_workers", r.cpu_workers},
                          {"usd_per_request", r.usd_per_request},
                          {"usd_per_1m_input_tokens", r.usd_per_1m_input_tokens},
                          {"usd_per_1m_output_tokens", r.usd_per_1m_output_tokens},
                          {"usd_per_1m_tokens_blended", r.usd_per_1m_tokens_blended},
                          {"break_even_api_price", r.break_even_api_price}};
      if (priced.max_rate) j["max_rate"] = max_rate_json(*priced.max_rate, o.pricing.load);
      if (o.pricing.load.mode == cost::Load::rate) j["rate"] = o.pricing.load.rate;
      if (o.pricing.load.in_step) j["in_step"] = true;
      if (priced.offline_run)
        j["simulated_run"] = {{"requests", priced.offline_run->requests}, {"span_s", priced.offline_run->span_s},
                        {"latency_s", percentiles_json(priced.offline_run->latency_s)}};
      if (r.api_usd_per_1m_tokens_blended) j["api_usd_per_1m_tokens_blended"] = *r.api_usd_per_1m_tokens_blended;
      if (r.break_even_utilization) j["break_even_utilization"] = *r.break_even_utilization;
      else if (in.api_usd_per_1m) j["break_even_utilization"] = nullptr;
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("%s x%d (%d replica(s) of tp %d) serving %s, %.0f in / %.0f out tokens per request, utilization %.2f\n",
                gpu.name.c_str(), o.pricing.scenario.gpus, scenario.replicas, scenario.serving.tp, model.name.c_str(),
                r.mean_input_tokens, r.mean_output_tokens, r.utilization);
    std::printf("workload: %s\n", workload_origin.c_str());
    std::printf("%s", preset_line(scenario.preset).c_str());
    if (priced.max_rate)
      std::printf("load: %.4g requests/s, the highest whose simulated TTFT p99 (%.4g ms) and TPOT p99 (%.4g ms) meet "
                  "%g ms and %g ms (%d simulations of %zu requests)\n",
                  priced.max_rate->rate, priced.max_rate->at.ttft_s.p99 * 1000, priced.max_rate->at.tpot_s.p99 * 1000,
                  o.pricing.load.targets.ttft_p99_ms, o.pricing.load.targets.tpot_p99_ms, priced.max_rate->simulations,
                  o.pricing.load.requests);
    std::printf("E(x) = %.3f + %.5f*x us (%s)\n", in.e.alpha_us, in.e.beta_us_per_token, in.e.origin.c_str());
    std::printf("GPU $%.4f/h (%s); CPU worker $%.4f/h\n", in.gpu_usd_per_hour, gpu_price_source.c_str(),
                in.cpu_usd_per_hour);
    std::printf("\nper request (s)      mean        p50        p95        p99\n");
    for (const auto& [name, p] : {std::pair{"E", r.e_s}, std::pair{"D", r.d_s}, std::pair{"T", r.t_s}})
      std::printf("  %-8s %12.6f %10.6f %10.6f %10.6f\n", name, p.mean, p.p50, p.p95, p.p99);
    std::printf("  TTFT     %12.6f %10.6f %10.6f %10.6f\n", r.ttft_s.mean, r.ttft_s.p50, r.ttft_s.p95, r.ttft_s.p99);
    std::printf("  TPOT     %12.6f %10.6f %10.6f %10.6f\n", r.tpot_s.mean, r.tpot_s.p50, r.tpot_s.p95, r.tpot_s.p99);
    std::printf("  ITL      %12.6f %10.6f %10.6f %10.6f\n", r.itl_s.mean, r.itl_s.p50, r.itl_s.p95, r.itl_s.p99);
    std::printf("  E's share of T: %.4f%%\n", 100 * r.e_share);
    std::printf("\nthe fleet at the operating point (steady batch %.0f per replica, at most %.0f)\n", r.batch, r.batch_limit);
    std::printf("  requests/s %.3f, input tokens/s %.1f, output tokens/s %.1f, CPU workers %.3f\n",
                r.requests_per_s, r.input_tokens_per_s, r.output_tokens_per_s, r.cpu_workers);
    std::printf("  usd_per_request %.6g\n  usd_per_1m_input_tokens %.4f\n  usd_per_1m_output_tokens %.4f\n"
                "  usd_per_1m_tokens_blended %.4f\n",
                r.usd_per_request, r.usd_per_1m_input_tokens, r.usd_per_1m_output_tokens, r.usd_per_1m_tokens_blended);
    std::printf("\nbreak-even\n  break_even_api_price %.4f $/1M tokens (blended) at utilization %.2f\n",
                r.break_even_api_price, r.utilization);
    if (r.api_usd_per_1m_tokens_blended) {
      std::printf("  api_usd_per_1m_tokens_blended %.4f (%s)\n", *r.api_usd_per_1m_tokens_blended, api_source.c_str());
      if (r.break_even_utilization && *r.break_even_utilization <= 1)
        std::printf("  break_even_utilization %.4f\n", *r.break_even_utilization);
      else
        std::printf("  break_even_utilization: none in (0, 1] (the API is cheaper at any load)\n");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead cost: %s\n", e.what());
    return 1;
  }
}

}  // namespace

void add_cost_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CostOptions>();
  CLI::App* cmd = app.add_subcommand("cost", "$ per request and per 1M tokens, T = E(x) + D(y|x), and the break-even");
  cmd->add_flag("--list", o->list, "Print the shipped GPU, model and price profiles");
  add_e_flags(*cmd, o->fits, o->backend, o->case_number, o->tokenizer, o->e_us);
  add_serving_flags(*cmd, o->pricing.scenario);
  add_load_flags(*cmd, o->pricing.load);
  cmd->add_option("--requests", o->pricing.load.requests, "With --max-rate: requests simulated per candidate rate")
      ->check(integer_in(100, 1'000'000'000))->capture_default_str();
  cmd->add_option("--seed", o->pricing.load.seed, "With --max-rate: the simulation's random seed")
      ->check(integer_in(0, INT64_MAX))->capture_default_str();
  cmd->add_option("--api-price", o->pricing.api_prices,
                  "API price IN_PER_1M,OUT_PER_1M or a preset name (see --list); repeat for more lines on the plots "
                  "(the first prices the break-even)");
  cmd->add_option("--workload", o->pricing.workload,
                  "Tokens per request: in=N,out=M, a named length distribution (sharegpt, or sharegpt,in=N,out=M at other means: "
                  "data/workloads/; 10000 draws by --seed averaged over, --offline N's run draws N), a JSONL file of token-count pairs ({\"input_tokens\": N, \"output_tokens\": M} a "
                  "line: the steady state at their means, the largest checked to fit), or the seed's JSONL records (input: the "
                  "rendered prompt; output: the answer)")
      ->capture_default_str();
  cmd->add_option("--workload-tokenizer", o->workload_tokenizer, "Tokenizer that counts a records workload")
      ->capture_default_str();
  cmd->add_option("--plots", o->plots,
                  "Write the sensitivity plots (cost against utilization and decode speed, SVG), the GPU table and cost.md here");
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->callback([o, cmd, &exit_code] {
    o->load_modes = load_modes_given(*cmd);
    exit_code = run_cost(*o);
  });
}

}  // namespace overhead::cli
