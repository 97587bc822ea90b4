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
#include "cli/cost_command_workload.hpp"
#include "cost/cost_model.hpp"
#include "cost/fits_select.hpp"
#include "report/cost_section.hpp"

namespace overhead::cli {

namespace {

struct CostOptions {
  std::string profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  std::vector<std::string> fits;
  std::string backend, tokenizer, e_us, gpu, model, api_price, plots, workload = "in=200,out=400",
      workload_tokenizer = "llama-3.3-70b-instruct";
  int case_number = 5;
  int gpus = 1;
  double gpu_usd_per_hour = -1, cpu_usd_per_hour = -1, utilization = 0.5;
  bool json = false, list = false;
};

void print_list(const CostOptions& o) {
  for (const char* kind : {"gpu", "model"}) {
    std::printf("%s profiles:\n", kind);
    for (const auto& name : cost::list_profiles(o.profiles_dir, kind)) {
      if (std::string(kind) == "gpu") {
        const auto g = cost::load_gpu(name, o.profiles_dir);
        std::printf("  %-14s %6.0f GB %7.0f GB/s %6.0f TFLOP/s  %s\n", name.c_str(), g.memory_gb.value,
                    g.bandwidth_gb_per_s.value, g.peak_tflops.value, g.description.c_str());
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
  so.profiles_dir = o.profiles_dir;
  so.gpu = o.gpu;
  so.model = o.model;
  so.gpus = o.gpus;
  so.utilization = o.utilization;
  so.gpu_usd_per_hour = o.gpu_usd_per_hour;
  so.cpu_usd_per_hour = o.cpu_usd_per_hour;
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

int run_cost(const CostOptions& o) {
  try {
    if (o.list) {
      print_list(o);
      return 0;
    }
    if (o.gpu.empty() || o.model.empty()) throw cost::CostError("--gpu and --model are required (see --list)");
    const auto prices = cost::load_prices(std::filesystem::path(o.profiles_dir) / "price" / "prices.json");
    const auto gpu = cost::load_gpu(o.gpu, o.profiles_dir);
    const auto model = cost::load_model(o.model, o.profiles_dir);

    cost::CostInputs in;
    in.gpu = cost::make_roofline(gpu, model, o.gpus);
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
    in.gpu_usd_per_hour = o.gpu_usd_per_hour;
    std::string gpu_price_source = "--gpu-usd-per-hour";
    if (in.gpu_usd_per_hour < 0) {
      const auto it = prices.instances.find(gpu.name);
      if (it == prices.instances.end()) throw cost::CostError("no price preset for " + gpu.name + ": give --gpu-usd-per-hour");
      in.gpu_usd_per_hour = it->second.usd_per_hour;
      gpu_price_source = it->second.kind + ", " + it->second.source + " (" + it->second.date + ")";
    }
    in.cpu_usd_per_hour = o.cpu_usd_per_hour;
    if (in.cpu_usd_per_hour < 0) in.cpu_usd_per_hour = prices.instances.at("m7i.large").usd_per_hour;
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
      nlohmann::json j = {{"gpu", gpu.name}, {"model", model.name}, {"gpus", o.gpus},
                          {"gpu_usd_per_hour", in.gpu_usd_per_hour}, {"cpu_usd_per_hour", in.cpu_usd_per_hour},
                          {"utilization", in.utilization}, {"e_origin", in.e.origin}, {"workload", workload_origin},
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
    std::printf("%s x%d serving %s, %.0f in / %.0f out tokens per request, utilization %.2f\n", gpu.name.c_str(),
                o.gpus, model.name.c_str(), r.mean_input_tokens, r.mean_output_tokens, in.utilization);
    std::printf("workload: %s\n", workload_origin.c_str());
    std::printf("E(x) = %.3f + %.5f*x us (%s)\n", in.e.alpha_us, in.e.beta_us_per_token, in.e.origin.c_str());
    std::printf("GPU $%.4f/h (%s); CPU worker $%.4f/h\n", in.gpu_usd_per_hour, gpu_price_source.c_str(),
                in.cpu_usd_per_hour);
    std::printf("\nper request (s)      mean        p50        p95        p99\n");
    for (const auto& [name, p] : {std::pair{"E", r.e_s}, std::pair{"D", r.d_s}, std::pair{"T", r.t_s}})
      std::printf("  %-8s %12.6f %10.6f %10.6f %10.6f\n", name, p.mean, p.p50, p.p95, p.p99);
    std::printf("  E's share of T: %.4f%%\n", 100 * r.e_share);
    std::printf("\nper instance at the utilization (steady batch %.0f)\n", r.batch);
    std::printf("  requests/s %.3f, input tokens/s %.1f, output tokens/s %.1f, CPU workers %.3f\n",
                r.requests_per_s, r.input_tokens_per_s, r.output_tokens_per_s, r.cpu_workers);
    std::printf("  usd_per_request %.6g\n  usd_per_1m_input_tokens %.4f\n  usd_per_1m_output_tokens %.4f\n"
                "  usd_per_1m_tokens_blended %.4f\n",
                r.usd_per_request, r.usd_per_1m_input_tokens, r.usd_per_1m_output_tokens, r.usd_per_1m_tokens_blended);
    std::printf("\nbreak-even\n  break_even_api_price %.4f $/1M tokens (blended) at utilization %.2f\n",
                r.break_even_api_price, in.utilization);
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
  cmd->add_option("--case", o->case_number, "Case whose E fit to use")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "Tokenizer whose E fit to use (default: the first of the case)");
  cmd->add_option("--e-us", o->e_us, "E typed in: ALPHA,BETA in microseconds (alpha + beta*input tokens)");
  cmd->add_option("--gpu", o->gpu, "GPU profile name or JSON file");
  cmd->add_option("--model", o->model, "Model profile name or JSON file");
  cmd->add_option("--gpus", o->gpus, "GPUs per model replica (tensor parallel)")->capture_default_str();
  cmd->add_option("--gpu-usd-per-hour", o->gpu_usd_per_hour, "Price of one GPU (default: the preset)");
  cmd->add_option("--cpu-usd-per-hour", o->cpu_usd_per_hour, "Price of one CPU worker (default: m7i.large preset)");
  cmd->add_option("--utilization", o->utilization, "Share of the replica's capacity in use, (0, 1]")->capture_default_str();
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
