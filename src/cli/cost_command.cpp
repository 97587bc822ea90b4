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
#include "report/cost_section.hpp"

namespace overhead::cli {

namespace {

struct CostOptions {
  std::string profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  std::vector<std::string> fits;
  std::string backend, tokenizer, e_us, api_price, plots, workload = "in=200,out=400",
      workload_tokenizer = "llama-3.3-70b-instruct";
  int case_number = 5;
  ServingFlags serving;
  double utilization = 0.5, concurrency = 0;
  bool max_throughput = false, utilization_given = false;
  bool json = false, list = false;
};

void print_list(const CostOptions& o) {
  for (const char* kind : {"gpu", "model"}) {
    std::printf("%s profiles:\n", kind);
    for (const auto& name : cost::list_profiles(o.profiles_dir, kind)) {
      if (std::string(kind) == "gpu") {
        const auto g = cost::load_gpu(name, o.profiles_dir);
        std::printf("  %-14s %6.0f GB %7.0f GB/s %6.0f/%5.0f/%5.0f TFLOP/s (BF16/FP8/FP4 dense)  %s\n", name.c_str(),
                    g.memory_gb.value, g.bandwidth_gb_per_s.value, g.peak_tflops.value, g.peak_for("fp8"),
                    g.peak_for("fp4"), g.description.c_str());
      } else {
        const auto m = cost::load_model(name, o.profiles_dir);
        std::printf("  %-14s %6.1fB params (%5.1fB active) %7.0f KV B/token  %s\n", name.c_str(),
                    m.parameters.value / 1e9, m.active_parameters.value / 1e9, m.kv_bytes_per_token.value,
                    m.description.c_str());
      }
    }
  }
  const auto prices = cost::load_prices(std::filesystem::path(o.profiles_dir) / "price" / "prices.json");
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
void write_plots(const CostOptions& o, const cost::CostInputs& in, const cost::Workload& w, const std::string& workload_origin) {
  report::CostSectionOptions so;
  so.spec = scenario_spec(o.serving, o.profiles_dir);
  so.utilization = o.utilization;
  so.workload = workload_origin;
  if (!o.api_price.empty()) so.api_prices = {o.api_price};
  const auto section = report::cost_section(report::cost_view(so, in.e, w));
  for (const auto& f : section.figures) write_output_file(o.plots, f.name + ".svg", report::svg_file(f));
  for (const auto& t : section.tables) write_output_file(o.plots, t.name + ".csv", report::to_csv(t));
  write_output_file(o.plots, "cost.md", section.markdown);
}

nlohmann::json percentiles_json(const cost::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}};
}

// The steady state's TTFT or TPOT: mean, p50 and p99 (one value for a single-request workload).
nlohmann::json steady_json(const cost::Percentiles& p) { return {{"mean", p.mean}, {"p50", p.p50}, {"p99", p.p99}}; }

int run_cost(const CostOptions& o) {
  try {
    if (o.list) {
      print_list(o);
      return 0;
    }
    const int modes = (o.utilization_given ? 1 : 0) + (o.max_throughput ? 1 : 0) + (o.concurrency > 0 ? 1 : 0);
    if (modes > 1) throw cost::CostError("give one of --utilization, --max-throughput and --concurrency");
    const cost::Scenario scenario = cost::make_scenario(scenario_spec(o.serving, o.profiles_dir));
    const auto& gpu = scenario.gpu;
    const auto& model = scenario.model;
    const auto& prices = scenario.prices;

    cost::CostInputs in;
    in.gpu = scenario.replica;
    in.replicas = scenario.replicas;
    in.serving = scenario.serving;
    if (o.max_throughput) in.mode = cost::LoadMode::max_throughput;
    if (o.concurrency > 0) {
      in.mode = cost::LoadMode::concurrency;
      in.concurrency = o.concurrency;
    }
    if (!o.e_us.empty()) {
      const auto [a, b] = cost::parse_number_pair(o.e_us, "--e-us");
      in.e = {a, b, "typed in"};
    } else if (!o.fits.empty()) {
      in.e = cost::e_from_fits(cost::select_fits(o.fits, o.backend, o.case_number), o.case_number, o.tokenizer);
    } else if (!o.backend.empty()) {
      throw cost::CostError("--backend needs --fits (one fits.json per backend)");
    } else {
      in.e = {0, 0, "none given (E = 0)"};
    }
    in.gpu_usd_per_hour = scenario.gpu_usd_per_hour;
    const std::string& gpu_price_source = scenario.gpu_price_source;
    in.cpu_usd_per_hour = scenario.cpu_usd_per_hour;
    in.utilization = o.utilization;
    std::string api_source;
    if (!o.api_price.empty()) {
      const auto preset = prices.apis.find(o.api_price);
      if (preset != prices.apis.end()) {
        in.api_usd_per_1m = {preset->second.usd_per_1m_input, preset->second.usd_per_1m_output};
        api_source = preset->second.kind + ", " + preset->second.source + " (" + preset->second.date + ")";
      } else {
        in.api_usd_per_1m = cost::parse_number_pair(o.api_price, "--api-price");
        api_source = "--api-price";
      }
    }
    cost::Workload workload;
    std::string workload_origin = o.workload;
    if (is_records_workload(o.workload)) {
      const auto w = workload_from_records(o.workload, o.workload_tokenizer);
      workload = w.workload;
      workload_origin = o.workload + " (" + std::to_string(workload.input_tokens.size()) + " records counted with " +
                        o.workload_tokenizer + ", " + std::to_string(w.left_out) + " left out)";
    } else {
      workload = cost::parse_workload(o.workload);
    }
    const auto r = cost::compute_cost(in, workload);
    if (!o.plots.empty()) write_plots(o, in, workload, workload_origin);

    if (o.json) {
      const char* mode = in.mode == cost::LoadMode::max_throughput ? "max_throughput"
                         : in.mode == cost::LoadMode::concurrency ? "concurrency" : "utilization";
      nlohmann::json j = {{"gpu", gpu.name}, {"model", model.name}, {"gpus", o.serving.gpus},
                          {"tp", scenario.serving.tp}, {"replicas", scenario.replicas},
                          {"precision", scenario.serving.precision.empty() ? model.precision : scenario.serving.precision},
                          {"kv_dtype", scenario.serving.kv_dtype}, {"mode", mode},
                          {"ttft_s", steady_json(r.ttft_s)}, {"tpot_s", steady_json(r.tpot_s)},
                          {"batch_limit", r.batch_limit}, {"prefill_bound", r.prefill_bound},
                          {"capacity_requests_per_s", r.capacity_requests_per_s},
                          {"engine", engine_json(scenario.serving.engine, in.gpu)},
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
      if (r.api_usd_per_1m_tokens_blended) j["api_usd_per_1m_tokens_blended"] = *r.api_usd_per_1m_tokens_blended;
      if (r.break_even_utilization) j["break_even_utilization"] = *r.break_even_utilization;
      else if (in.api_usd_per_1m) j["break_even_utilization"] = nullptr;
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("%s x%d (%d replica(s) of tp %d) serving %s, %.0f in / %.0f out tokens per request, utilization %.2f\n",
                gpu.name.c_str(), o.serving.gpus, scenario.replicas, scenario.serving.tp, model.name.c_str(),
                r.mean_input_tokens, r.mean_output_tokens, r.utilization);
    std::printf("workload: %s\n", workload_origin.c_str());
    std::printf("E(x) = %.3f + %.5f*x us (%s)\n", in.e.alpha_us, in.e.beta_us_per_token, in.e.origin.c_str());
    std::printf("GPU $%.4f/h (%s); CPU worker $%.4f/h\n", in.gpu_usd_per_hour, gpu_price_source.c_str(),
                in.cpu_usd_per_hour);
    std::printf("\nper request (s)      mean        p50        p95        p99\n");
    for (const auto& [name, p] : {std::pair{"E", r.e_s}, std::pair{"D", r.d_s}, std::pair{"T", r.t_s}})
      std::printf("  %-8s %12.6f %10.6f %10.6f %10.6f\n", name, p.mean, p.p50, p.p95, p.p99);
    std::printf("  TTFT     %12.6f %10.6f %10.6f %10.6f\n", r.ttft_s.mean, r.ttft_s.p50, r.ttft_s.p95, r.ttft_s.p99);
    std::printf("  TPOT     %12.6f %10.6f %10.6f %10.6f\n", r.tpot_s.mean, r.tpot_s.p50, r.tpot_s.p95, r.tpot_s.p99);
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
  cmd->add_option("--profiles", o->profiles_dir, "Folder of profiles")->capture_default_str();
  cmd->add_option("--fits", o->fits,
                  "fits.json from `overhead analyze` (E = alpha + beta*tokens); repeat once per backend with --backend");
  cmd->add_option("--backend", o->backend,
                  "With several --fits: the backend whose fit to use (the fits.json's store scheme: sqlite, postgres, ...)");
  cmd->add_option("--case", o->case_number, "Case whose E fit to use")->check(integer_in(0, 1000))->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "Tokenizer whose E fit to use (default: the first of the case)");
  cmd->add_option("--e-us", o->e_us, "E typed in: ALPHA,BETA in microseconds (alpha + beta*input tokens)")
      ->check(number_pair_check());
  add_serving_flags(*cmd, o->serving);
  cmd->add_option("--utilization", o->utilization, "Share of the fleet's capacity in use, (0, 1] (the default load)")
      ->check(number_in(1e-9, 1))->capture_default_str()
      ->each([o](const std::string&) { o->utilization_given = true; });
  cmd->add_flag("--max-throughput", o->max_throughput, "Price the fleet at its capacity: every replica at its batch limit");
  cmd->add_option("--concurrency", o->concurrency,
                  "Price the fleet with this many requests in flight (clients that send their next when one ends)")
      ->check(number_in(1, 1e7));
  cmd->add_option("--api-price", o->api_price, "API price IN_PER_1M,OUT_PER_1M or a preset name (see --list)");
  cmd->add_option("--workload", o->workload,
                  "Tokens per request: in=N,out=M, or the seed's JSONL records (input: the rendered prompt; output: the answer)")
      ->capture_default_str();
  cmd->add_option("--workload-tokenizer", o->workload_tokenizer, "Tokenizer that counts a records workload")
      ->capture_default_str();
  cmd->add_option("--plots", o->plots,
                  "Write the sensitivity plots (cost against utilization and decode speed, SVG), the GPU table and cost.md here");
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->callback([o, &exit_code] { exit_code = run_cost(*o); });
}

}  // namespace overhead::cli
