// `overhead simulate`: the capacity simulator (src/cost/simulator.hpp) wired to the E fit and the
// GPU/model profiles: Poisson arrivals, W CPU workers with E(x), G GPU slots with D(y|x) from the
// roofline at the running batch; prints throughput, utilisation, waits, latency, saturation and the
// fleet's cost. With --target-p99, plans the fewest instances and workers (cost/capacity.hpp); with
// --replay, replays a measured run as a closed batch (simulate_command_replay.hpp).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "cli/commands.hpp"
#include "cli/cost_command_workload.hpp"
#include "cli/simulate_command_replay.hpp"
#include "cost/capacity.hpp"
#include "cost/cost_model.hpp"
#include "cost/fits_select.hpp"
#include "cost/profiles.hpp"
#include "cost/simulator.hpp"

namespace overhead::cli {

namespace {

struct SimulateOptions {
  std::string profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  std::vector<std::string> fits;
  std::string backend, tokenizer, workload_tokenizer = "llama-3.3-70b-instruct", e_us, gpu, model, workload = "in=200,out=400", e_dist = "fixed", d_dist = "fixed";
  int case_number = 5, gpus = 1, workers = 1, gpu_slots = 0;
  double rate = 0, burst_cv = 0, target_p99_ms = 0, gpu_usd_per_hour = -1, cpu_usd_per_hour = -1;
  std::size_t requests = 100000;
  std::uint64_t seed = 1;
  bool json = false;
};

// Service time with the model's mean: as is ("fixed"), or exponential around it ("exp"), the
// latter for comparing with M/M/c theory and for a pessimistic spread.
double draw(double mean, bool exponential, std::mt19937_64& rng) {
  if (!exponential || mean <= 0) return mean;
  return std::exponential_distribution<double>(1.0 / mean)(rng);
}

bool exponential_flag(const std::string& value, const char* flag) {
  if (value == "fixed") return false;
  if (value == "exp") return true;
  throw cost::CostError(std::string(flag) + " must be fixed or exp, got \"" + value + "\"");
}

nlohmann::json percentiles_json(const cost::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}};
}

void print_text(const SimulateOptions& o, const cost::ELinear& e, const cost::SimResult& r) {
  char arrivals[96];
  if (o.burst_cv > 0)
    std::snprintf(arrivals, sizeof arrivals, "gamma bursts at %.4g/s, CV %.3g (drawn: %.4g/s, CV %.3g)", o.rate, o.burst_cv,
                  r.arrival_rate, r.arrival_cv);
  else
    std::snprintf(arrivals, sizeof arrivals, "Poisson at %.4g/s", o.rate);
  std::printf("%zu requests, %s (seed %llu); E(x) = %.3f + %.5f*x us (%s)\n", r.requests, arrivals,
              static_cast<unsigned long long>(o.seed), e.alpha_us, e.beta_us_per_token, e.origin.c_str());
  std::printf("completed %.4g requests/s over %.4g s simulated\n\n", r.throughput_per_s, r.span_s);
  std::printf("%-5s %7s %6s %8s %7s %10s %10s %10s %10s %11s %9s\n", "stage", "servers", "util", "offered", "batch",
              "wait mean", "wait p99", "svc mean", "svc p99", "queue mean", "queue max");
  for (const auto& s : r.stages)
    std::printf("%-5s %7d %6.3f %8.3f %7.2f %10.4g %10.4g %10.4g %10.4g %11.4g %9zu\n", s.name.c_str(), s.servers,
                s.utilization, s.offered_load, s.mean_batch, s.wait_s.mean, s.wait_s.p99, s.service_s.mean,
                s.service_s.p99, s.mean_queue_length, s.max_queue_length);
  std::printf("\n%-22s %10s %10s %10s %10s\n", "seconds", "mean", "p50", "p95", "p99");
  for (const auto& [name, p] : {std::pair{"queue wait (all)", r.queue_wait_s}, std::pair{"end-to-end", r.latency_s}})
    std::printf("%-22s %10.4g %10.4g %10.4g %10.4g\n", name, p.mean, p.p50, p.p95, p.p99);
  // Queue depth over time: ten of the recorded instants (all of them in --json).
  std::printf("\n%-12s", "queue depth");
  for (const auto& s : r.stages) std::printf(" %10s", s.name.c_str());
  std::printf("\n");
  const std::size_t step = std::max<std::size_t>(1, r.depth_times.size() / 10);
  for (std::size_t k = step - 1; k < r.depth_times.size(); k += step) {
    std::printf("  t=%-9.4g", r.depth_times[k]);
    for (const auto& s : r.stages) std::printf(" %10.0f", s.depth[k]);
    std::printf("\n");
  }
  if (r.saturated_stage.empty())
    std::printf("\nno stage saturates; the busiest is %s\n", r.bottleneck_stage.c_str());
  else
    std::printf("\nSATURATED: %s (offered load >= 1; its queue grows without bound at this rate)\n",
                r.saturated_stage.c_str());
}

// $/hour of a fleet and $ per request at its throughput; the prices are the presets unless given.
struct FleetCost {
  double gpu_usd_per_hour = 0, cpu_usd_per_hour = 0, usd_per_hour = 0, usd_per_request = 0;
};
FleetCost fleet_cost(const SimulateOptions& o, const std::string& gpu_name, int instances, int workers, double requests_per_s) {
  const auto prices = cost::load_prices(std::filesystem::path(o.profiles_dir) / "price" / "prices.json");
  FleetCost c;
  c.gpu_usd_per_hour = o.gpu_usd_per_hour;
  if (c.gpu_usd_per_hour < 0) {
    const auto it = prices.instances.find(gpu_name);
    if (it == prices.instances.end()) throw cost::CostError("no price preset for " + gpu_name + ": give --gpu-usd-per-hour");
    c.gpu_usd_per_hour = it->second.usd_per_hour;
  }
  c.cpu_usd_per_hour = o.cpu_usd_per_hour >= 0 ? o.cpu_usd_per_hour : prices.instances.at("m7i.large").usd_per_hour;
  c.usd_per_hour = instances * o.gpus * c.gpu_usd_per_hour + workers * c.cpu_usd_per_hour;
  c.usd_per_request = requests_per_s > 0 ? c.usd_per_hour / 3600.0 / requests_per_s : 0;
  return c;
}

nlohmann::json cost_json(const FleetCost& c) {
  return {{"gpu_usd_per_hour", c.gpu_usd_per_hour}, {"cpu_usd_per_hour", c.cpu_usd_per_hour},
          {"usd_per_hour", c.usd_per_hour}, {"usd_per_request", c.usd_per_request}};
}

int run_simulate(const SimulateOptions& o) {
  try {
    if (!(o.rate > 0)) throw cost::CostError("--rate must be > 0 (requests per second), or give --replay");
    if (o.workers < 1) throw cost::CostError("--workers must be at least 1");
    if (o.gpu.empty() || o.model.empty()) throw cost::CostError("--gpu and --model are required (see `overhead cost --list`)");
    const bool e_exp = exponential_flag(o.e_dist, "--e-dist");
    const bool d_exp = exponential_flag(o.d_dist, "--d-dist");

    cost::ELinear e{0, 0, "none given (E = 0)"};
    if (!o.e_us.empty()) {
      const auto [a, b] = cost::parse_number_pair(o.e_us, "--e-us");
      e = {a, b, "typed in"};
    } else if (!o.fits.empty()) {
      e = cost::e_from_fits(cost::select_fits(o.fits, o.backend, o.case_number), o.case_number, o.tokenizer);
    } else if (!o.backend.empty()) {
      throw cost::CostError("--backend needs --fits (one fits.json per backend)");
    }
    const auto roofline =
        cost::make_roofline(cost::load_gpu(o.gpu, o.profiles_dir), cost::load_model(o.model, o.profiles_dir), o.gpus);
    const auto workload = is_records_workload(o.workload) ? workload_from_records(o.workload, o.workload_tokenizer).workload
                                                          : cost::parse_workload(o.workload);
    double mean_tokens = 0;
    for (std::size_t i = 0; i < workload.input_tokens.size(); ++i)
      mean_tokens += workload.input_tokens[i] + workload.output_tokens[i];
    mean_tokens /= static_cast<double>(workload.input_tokens.size());
    int slots = o.gpu_slots;
    if (slots <= 0) slots = static_cast<int>(cost::concurrency_limit(roofline, mean_tokens));

    cost::SimConfig config;
    config.arrival_rate = o.rate;
    if (o.burst_cv < 0) throw cost::CostError("--burst-cv must be > 0 (1 = Poisson-like, above 1 = bursts)");
    if (o.burst_cv > 0) {
      config.arrivals = cost::Arrivals::gamma;
      config.arrival_cv = o.burst_cv;
    }
    config.requests = o.requests;
    config.seed = o.seed;
    for (std::size_t i = 0; i < workload.input_tokens.size(); ++i)
      config.workload.push_back({workload.input_tokens[i], workload.output_tokens[i]});
    config.stages.push_back({"cpu", o.workers, [e, e_exp](const cost::SimRequest& q, double, std::mt19937_64& rng) {
                               return draw(e.at(q.input_tokens) / 1e6, e_exp, rng);
                             }});
    config.stages.push_back({"gpu", slots, [roofline, d_exp](const cost::SimRequest& q, double batch, std::mt19937_64& rng) {
                               return draw(cost::request_seconds(roofline, q.input_tokens, q.output_tokens, batch), d_exp, rng);
                             }});
    if (o.target_p99_ms > 0) {
      cost::CapacityQuery q;
      q.rate = o.rate;
      q.arrivals = config.arrivals;
      q.arrival_cv = config.arrival_cv;
      q.target_p99_s = o.target_p99_ms / 1000;
      q.requests = o.requests;
      q.seed = o.seed;
      q.workload = config.workload;
      q.cpu = config.stages[0].service_s;
      q.gpu = config.stages[1].service_s;
      q.gpu_slots = slots;
      const auto plan = cost::plan_capacity(q);
      const auto c = plan.met ? fleet_cost(o, cost::load_gpu(o.gpu, o.profiles_dir).name, plan.instances, plan.workers,
                                           plan.result.throughput_per_s)
                              : FleetCost{};
      if (o.json) {
        nlohmann::json j = {{"target_p99_s", q.target_p99_s}, {"arrival_rate", o.rate}, {"met", plan.met},
                            {"simulations", plan.simulations}, {"gpus_per_instance", o.gpus}, {"gpu_slots", slots}};
        if (plan.met) {
          j["gpu_instances"] = plan.instances;
          j["cpu_workers"] = plan.workers;
          j["latency_s"] = percentiles_json(plan.result.latency_s);
          j["cost"] = cost_json(c);
        } else {
          j["reason"] = plan.reason;
        }
        std::printf("%s\n", j.dump(1).c_str());
      } else if (plan.met) {
        std::printf("target p99 %.4g ms at %.4g requests/s: %d GPU instance(s) of %d GPU(s) (%d slots each) and %d CPU "
                    "worker(s)\n  simulated p50 %.4g s, p99 %.4g s (%d simulations of %zu requests)\n"
                    "  $%.4f/hour, $%.6g per request\n",
                    o.target_p99_ms, o.rate, plan.instances, o.gpus, slots, plan.workers, plan.result.latency_s.p50,
                    plan.result.latency_s.p99, plan.simulations, o.requests, c.usd_per_hour, c.usd_per_request);
      } else {
        std::printf("target p99 %.4g ms at %.4g requests/s: not met: %s\n", o.target_p99_ms, o.rate, plan.reason.c_str());
      }
      return plan.met ? 0 : 1;
    }
    const auto r = cost::simulate(config);
    const auto c = fleet_cost(o, cost::load_gpu(o.gpu, o.profiles_dir).name, 1, o.workers, r.throughput_per_s);

    if (!o.json) {
      print_text(o, e, r);
      std::printf("cost: $%.4f/hour (1 instance x %d GPU(s) at $%.4f, %d worker(s) at $%.4f), $%.6g per request\n",
                  c.usd_per_hour, o.gpus, c.gpu_usd_per_hour, o.workers, c.cpu_usd_per_hour, c.usd_per_request);
      return 0;
    }
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& s : r.stages)
      stages.push_back({{"name", s.name}, {"servers", s.servers}, {"utilization", s.utilization},
                        {"offered_load", s.offered_load}, {"mean_batch", s.mean_batch},
                        {"mean_queue_length", s.mean_queue_length}, {"max_queue_length", s.max_queue_length},
                        {"saturated", s.saturated}, {"wait_s", percentiles_json(s.wait_s)},
                        {"service_s", percentiles_json(s.service_s)}});
    nlohmann::json j = {{"requests", r.requests}, {"arrival_rate", o.rate}, {"seed", o.seed},
                        {"arrivals", o.burst_cv > 0 ? "gamma" : "poisson"}, {"arrival_cv", o.burst_cv > 0 ? o.burst_cv : 1.0},
                        {"drawn_arrival_rate", r.arrival_rate}, {"drawn_arrival_cv", r.arrival_cv},
                        {"gpu", o.gpu}, {"model", o.model}, {"gpus", o.gpus}, {"workers", o.workers},
                        {"gpu_slots", slots}, {"e_origin", e.origin}, {"e_alpha_us", e.alpha_us},
                        {"e_beta_us_per_token", e.beta_us_per_token}, {"predicted_total_s", r.span_s},
                        {"throughput_per_s", r.throughput_per_s}, {"stages", stages},
                        {"queue_wait_s", percentiles_json(r.queue_wait_s)}, {"latency_s", percentiles_json(r.latency_s)},
                        {"mean_in_system", r.mean_in_system}, {"bottleneck_stage", r.bottleneck_stage},
                        {"cost", cost_json(c)}};
    nlohmann::json depth = {{"t_s", r.depth_times}};
    for (const auto& s : r.stages) depth[s.name] = s.depth;
    j["queue_depth_over_time"] = depth;
    j["requests_in_workload"] = workload.input_tokens.size();
    j["saturated_stage"] = r.saturated_stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saturated_stage);
    std::printf("%s\n", j.dump(1).c_str());
    return 0;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "overhead simulate: %s\n", ex.what());
    return 1;
  }
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate", "Discrete-event capacity simulation: CPU workers with E(x), then GPU slots with D(y|x)");
  auto replay = std::make_shared<ReplayOptions>();
  cmd->add_option("--rate", o->rate, "Arrival rate, requests per second (Poisson unless --burst-cv)");
  cmd->add_option("--burst-cv", o->burst_cv,
                  "Bursts: gamma inter-arrival gaps with this coefficient of variation at the same mean --rate (> 1 = burstier)");
  cmd->add_option("--target-p99", o->target_p99_ms,
                  "Capacity planning: the fewest GPU instances, then CPU workers, whose end-to-end p99 (ms) meets this at --rate");
  cmd->add_option("--gpu-usd-per-hour", o->gpu_usd_per_hour, "Price of one GPU (default: the preset)");
  cmd->add_option("--cpu-usd-per-hour", o->cpu_usd_per_hour, "Price of one CPU worker (default: m7i.large preset)");
  cmd->add_option("--requests", o->requests, "Requests to simulate")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same result)")->capture_default_str();
  CLI::Option* workers = cmd->add_option("--workers", o->workers, "CPU workers (the E stage; with --replay default: the run's)")->capture_default_str();
  cmd->add_option("--fits", o->fits,
                  "fits.json from `overhead analyze` (E = alpha + beta*tokens); repeat once per backend with --backend");
  cmd->add_option("--backend", o->backend,
                  "With several --fits: the backend whose fit to use (the fits.json's store scheme: sqlite, postgres, ...)");
  cmd->add_option("--case", o->case_number, "Case whose E fit to use")->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "Tokenizer whose E fit to use (default: the first of the case)");
  cmd->add_option("--e-us", o->e_us, "E typed in: ALPHA,BETA in microseconds (alpha + beta*input tokens)");
  cmd->add_option("--e-dist", o->e_dist, "E around its mean: fixed or exp")->capture_default_str();
  cmd->add_option("--d-dist", o->d_dist, "D around the roofline: fixed or exp")->capture_default_str();
  cmd->add_option("--gpu", o->gpu, "GPU profile name or JSON file");
  cmd->add_option("--model", o->model, "Model profile name or JSON file");
  cmd->add_option("--gpus", o->gpus, "GPUs per model replica (tensor parallel)")->capture_default_str();
  cmd->add_option("--gpu-slots", o->gpu_slots, "Concurrent sequences on the GPU (default: what fits in memory)");
  cmd->add_option("--profiles", o->profiles_dir, "Folder of profiles")->capture_default_str();
  cmd->add_option("--workload", o->workload,
                  "Tokens per request: in=N,out=M, or the seed's JSONL records (used in turn; input: the rendered prompt, "
                  "output: the answer)")
      ->capture_default_str();
  cmd->add_option("--workload-tokenizer", o->workload_tokenizer, "Tokenizer that counts a records workload")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->add_option("--replay", replay->source,
                  "Closed batch: replay a measured run's items (store URL with --experiment, or a timeline .csv[.gz]) "
                  "with E from --fits (model b) instead of Poisson arrivals");
  cmd->add_option("--experiment", replay->experiment, "With --replay on a store: the run's experiment (e.g. jmtbench-case5)");
  CLI::Option* batch = cmd->add_option("--batch", replay->batch, "With --replay: items per receive (default: the run's)");
  cmd->add_option("--prefetch", replay->prefetch, "With --replay: on or off (receive/delete in a second thread)")->capture_default_str();
  cmd->add_option("--max-in-flight", replay->max_in_flight, "With --replay: items received but not settled (0 = 4 x batch)");
  cmd->add_option("--residuals", replay->residuals,
                  "With --replay: a fitted run (store URL or timeline) whose residuals against --fits give E its spread");
  cmd->add_option("--replications", replay->replications, "With --residuals: simulated repetitions (total = their mean)")
      ->capture_default_str();
  cmd->add_option("--residuals-experiment", replay->residuals_experiment, "The experiment of --residuals on a store");
  cmd->add_flag("--measured-only", replay->measured_only, "With --replay: the run's measured total and cycle percentiles only");
  cmd->add_option("--write-timeline", replay->write_timeline, "With --replay: write the run's timeline CSV and stop");
  cmd->callback([o, replay, workers, batch, &exit_code] {
    if (!replay->source.empty()) {
      try {
        replay->fits = o->fits.empty() ? "" : cost::select_fits(o->fits, o->backend, o->case_number);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "overhead simulate: %s\n", ex.what());
        exit_code = 1;
        return;
      }
      replay->case_number = o->case_number;
      replay->seed = o->seed;
      replay->json = o->json;
      replay->workers = workers->count() ? o->workers : 0;
      if (!batch->count()) replay->batch = 0;
      exit_code = run_simulate_replay(*replay);
      return;
    }
    exit_code = run_simulate(*o);
  });
}

}  // namespace overhead::cli
