#include "cli/simulate_command_print.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include "cli/cli_io.hpp"
#include "cli/cost_command_serving.hpp"
#include "cost/latency_sketch.hpp"
#include "report/simulation_figures.hpp"

namespace overhead::cli {
namespace {

// Every stage of a run, with the pipeline's parts where they ran (the chain's publisher pool and input
// queue; the engine simulation has neither).
nlohmann::json stages_json(const cost::SimResult& r, bool publishing, bool input_queue) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages) {
    nlohmann::json st = {{"name", s.name}, {"servers", s.servers}, {"utilization", s.utilization},
                         {"offered_load", s.offered_load}, {"mean_batch", s.mean_batch},
                         {"mean_queue_length", s.mean_queue_length}, {"max_queue_length", s.max_queue_length},
                         {"saturated", s.saturated}, {"wait_s", percentiles_json(s.wait_s)},
                         {"service_s", percentiles_json(s.service_s)}, {"request_path", s.request_path}};
    if (s.name == "cpu" && publishing) {
      st["blocked_share"] = s.blocked_share;
      st["blocked_s"] = percentiles_json(s.blocked_s);
    }
    if (s.rounds > 0) {
      st["rounds"] = s.rounds;
      st["mean_round_size"] = s.mean_round_size;
    }
    if (s.name == "cpu" && input_queue) st["io_share"] = s.io_share;
    stages.push_back(std::move(st));
  }
  return stages;
}

// The queue depth over time, the workload's size, and E's and D's percentiles, in a run's JSON.
void add_depth_and_services(nlohmann::json& j, const cost::SimResult& r, std::size_t requests_in_workload) {
  nlohmann::json depth = {{"t_s", r.depth_times}};
  for (const auto& s : r.stages) depth[s.name] = s.depth;
  j["queue_depth_over_time"] = depth;
  j["requests_in_workload"] = requests_in_workload;
  for (const auto& s : r.stages) {
    if (s.name == "cpu") j["e_s"] = percentiles_json(s.service_s);
    if (s.name == "gpu") j["d_s"] = percentiles_json(s.service_s);
  }
}

}  // namespace

// --plots DIR: queue depth over time and the latency percentiles, as SVG files.
void write_simulation_plots(const SimulateOptions& o, const cost::SimResult& r) {
  const std::string title = o.pricing.scenario.gpu + " x" + std::to_string(o.pricing.scenario.gpus) + " serving " + o.pricing.scenario.model + ", " +
                            std::to_string(o.workers) + " CPU worker(s), " + std::to_string(r.requests) + " requests";
  for (const auto& f : report::simulation_figures(r, title)) write_output_file(o.plots, f.name + ".svg", report::svg_file(f));
}

void print_text(const SimulateOptions& o, const std::string& arrivals, const std::string& around, const cost::ELinear& e,
                const cost::SimResult& r) {
  std::printf("%zu requests, %s (seed %llu); E(x) = %.3f + %.5f*x us (%s)\n", r.requests, arrivals.c_str(),
              static_cast<unsigned long long>(o.seed()), e.alpha_us, e.beta_us_per_token, e.origin.c_str());
  if (!around.empty()) std::printf("%s\n", around.c_str());
  std::printf("completed %.4g requests/s over %.4g s simulated\n\n", r.throughput_per_s, r.span_s);
  bool branch = false, blocked = false, rounds = false;
  for (const auto& s : r.stages) {
    branch = branch || !s.request_path;
    blocked = blocked || s.name == "publish";  // the pool is modelled: show whether it blocked
    rounds = rounds || s.rounds > 0;
  }
  std::printf("%-9s %7s %6s %8s %7s %10s %10s %10s %10s %11s %9s", "stage", "servers", "util", "offered", "batch",
              "wait mean", "wait p99", "svc mean", "svc p99", "queue mean", "queue max");
  if (blocked) std::printf(" %8s %11s", "blocked", "blocked p99");
  if (rounds) std::printf(" %8s %6s %6s", "rounds", "size", "io");
  std::printf("\n");
  for (const auto& s : r.stages) {
    const std::string name = s.request_path ? s.name : s.name + "*";
    std::printf("%-9s %7d %6.3f %8.3f %7.2f %10.4g %10.4g %10.4g %10.4g %11.4g %9zu", name.c_str(), s.servers,
                s.utilization, s.offered_load, s.mean_batch, s.wait_s.mean, s.wait_s.p99, s.service_s.mean,
                s.service_s.p99, s.mean_queue_length, s.max_queue_length);
    if (blocked) std::printf(" %8.3f %11.4g", s.blocked_share, s.blocked_s.p99);
    if (rounds) std::printf(" %8zu %6.2f %6.3f", s.rounds, s.mean_round_size, s.io_share);
    std::printf("\n");
  }
  if (branch)
    std::printf("* the record's branch (publish, then store), off the request's path; blocked: share of the workers' "
                "time held by a full publisher pool, and per request\n");
  if (rounds)
    std::printf("rounds: receives (cpu) and store writes (consumer), of `size` on average; io: share of the workers' "
                "time in receives and deletes on their own thread\n");
  std::printf("\n%-22s %10s %10s %10s %10s\n", "seconds", "mean", "p50", "p95", "p99");
  std::vector<std::pair<const char*, cost::Percentiles>> rows = {{"queue wait (all)", r.queue_wait_s}, {"end-to-end", r.latency_s}};
  for (const auto& s : r.stages) {
    if (s.name == "cpu") rows.emplace_back("E", s.service_s);
    if (s.name == "gpu") rows.emplace_back("D", s.service_s);
  }
  if (r.stored_latency_s.p99 > 0) rows.emplace_back("arrival to stored", r.stored_latency_s);
  for (const auto& [name, p] : rows)
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

nlohmann::json cost_json(const cost::FleetCost& c) {
  return {{"gpu_usd_per_hour", c.gpu_usd_per_hour}, {"cpu_usd_per_hour", c.cpu_usd_per_hour},
          {"usd_per_hour", c.usd_per_hour}, {"usd_per_request", c.usd_per_request}};
}

void print_engine_run(const SimulateOptions& o, const cost::Scenario& sc, const cost::ELinear& e,
                      const cost::EngineSimConfig& config, const cost::SimResult& r, const cost::MaxRate& max_rate,
                      const cost::FleetCost& c, const cost::TokenPrices& per_1m, std::size_t requests_in_workload) {
  const std::string precision = sc.serving.precision.empty() ? sc.model.precision : sc.serving.precision;
  std::string arrivals;
  {
    char text[200];
    if (o.concurrency > 0)
      std::snprintf(text, sizeof text, "closed loop of %.0f clients", o.concurrency);
    else if (o.burst_cv > 0)
      std::snprintf(text, sizeof text, "gamma bursts at %.4g/s, CV %.3g", config.arrival_rate, o.burst_cv);
    else
      std::snprintf(text, sizeof text, "Poisson at %.4g/s%s", o.max_rate() ? max_rate.rate : config.arrival_rate,
                    o.max_rate() ? " (the highest meeting the p99 targets)" : "");
    arrivals = text;
  }
  if (!o.json) {
    print_text(o, arrivals, "", e, r);
    std::printf("\nengine: %s x%d as %d replica(s) of tp %d, %s weights, %s KV, batch cap %.0f, prefill budget %.0f tokens\n",
                sc.gpu.name.c_str(), o.pricing.scenario.gpus, sc.replicas, sc.serving.tp, precision.c_str(), sc.serving.kv_dtype.c_str(),
                sc.replica.max_concurrency, sc.replica.prefill_chunk_tokens);
    std::printf("%s", preset_line(sc.preset).c_str());
    std::printf("%-22s %10s %10s %10s %10s\n", "seconds", "mean", "p50", "p95", "p99");
    std::printf("%-22s %10.4g %10.4g %10.4g %10.4g\n", "TTFT", r.ttft_s.mean, r.ttft_s.p50, r.ttft_s.p95, r.ttft_s.p99);
    std::printf("%-22s %10.4g %10.4g %10.4g %10.4g\n", "TPOT", r.tpot_s.mean, r.tpot_s.p50, r.tpot_s.p95, r.tpot_s.p99);
    std::printf("%-22s %10.4g %10.4g %10.4g %10.4g\n", "ITL (per token)", r.itl_s.mean, r.itl_s.p50, r.itl_s.p95, r.itl_s.p99);
    std::printf("fleet: %.4g requests/s, %.4g output tokens/s, mean batch %.1f per replica\n", r.requests_per_s,
                r.output_tokens_per_s, r.mean_batch);
    if (sc.priced)
      std::printf("cost: $%.4f/hour (%d GPU(s) at $%.4f, %d worker(s) at $%.4f), $%.6g per request, $%.4f per 1M output tokens\n",
                  c.usd_per_hour, o.pricing.scenario.gpus, c.gpu_usd_per_hour, o.workers, c.cpu_usd_per_hour, c.usd_per_request,
                  per_1m.usd_per_1m_output);
    else
      std::printf("cost: not priced (no --gpu-usd-per-hour, --instance or price preset for the GPU)\n");
    return;
  }
  const nlohmann::json stages = stages_json(r, false, false);
  nlohmann::json j = {{"requests", r.requests}, {"seed", o.seed()}, {"arrivals", o.concurrency > 0 ? "closed" : o.burst_cv > 0 ? "gamma" : "poisson"},
                      {"arrival_rate", o.concurrency > 0 ? r.requests_per_s : config.arrival_rate},
                      {"arrival_cv", o.burst_cv > 0 ? o.burst_cv : 1.0},
                      {"gpu", sc.gpu.name}, {"model", sc.model.name}, {"gpus", o.pricing.scenario.gpus}, {"tp", sc.serving.tp},
                      {"replicas", sc.replicas}, {"precision", precision}, {"kv_dtype", sc.serving.kv_dtype},
                      {"engine", engine_json(sc.serving.engine, sc.replica)}, {"engine_preset", preset_json(sc.preset)},
                      {"workers", o.workers},
                      {"e_origin", e.origin}, {"e_alpha_us", e.alpha_us}, {"e_beta_us_per_token", e.beta_us_per_token},
                      {"predicted_total_s", r.span_s}, {"throughput_per_s", r.throughput_per_s},
                      {"requests_per_s", r.requests_per_s}, {"output_tokens_per_s", r.output_tokens_per_s},
                      {"ttft_s", percentiles_json(r.ttft_s)}, {"tpot_s", percentiles_json(r.tpot_s)},
                      {"itl_s", percentiles_json(r.itl_s)}, {"latency_s", percentiles_json(r.latency_s)}, {"queue_wait_s", percentiles_json(r.queue_wait_s)},
                      {"mean_batch", r.mean_batch}, {"steps", r.steps}, {"stages", stages},
                      {"mean_in_system", r.mean_in_system}, {"bottleneck_stage", r.bottleneck_stage},
                      {"percentile_relative_error", cost::LatencySketch::kRelativeError},
                      {"priced", sc.priced}};
  if (sc.priced) {
    j["cost"] = cost_json(c);
    j["usd_per_request"] = c.usd_per_request;
    j["usd_per_1m_output_tokens"] = per_1m.usd_per_1m_output;
    j["usd_per_1m_tokens_blended"] = per_1m.usd_per_1m_blended;
  }
  if (o.concurrency > 0) j["concurrency"] = o.concurrency;
  if (o.max_rate())
    j["max_rate"] = {{"requests_per_s", max_rate.rate}, {"ttft_p99_ms", o.targets().ttft_p99_ms}, {"tpot_p99_ms", o.targets().tpot_p99_ms},
                     {"simulations", max_rate.simulations}};
  add_depth_and_services(j, r, requests_in_workload);
  j["saturated_stage"] = r.saturated_stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saturated_stage);
  std::printf("%s\n", j.dump(1).c_str());
}

std::string chain_arrivals_text(const SimulateOptions& o, const ArrivalReplay& replayed, const cost::SimResult& r) {
  char text[160];
  if (!o.replay_arrivals.empty())
    std::snprintf(text, sizeof text, "arrivals replayed from %s (%s, %s stamps, speedup %.4g; %.4g/s, CV %.3g)",
                  o.replay_arrivals.c_str(), o.experiment.c_str(), replayed.stamp.c_str(), o.speedup, r.arrival_rate,
                  r.arrival_cv);
  else if (o.burst_cv > 0)
    std::snprintf(text, sizeof text, "gamma bursts at %.4g/s, CV %.3g (drawn: %.4g/s, CV %.3g)", o.rate, o.burst_cv,
                  r.arrival_rate, r.arrival_cv);
  else
    std::snprintf(text, sizeof text, "Poisson at %.4g/s", o.rate);
  return text;
}

void print_chain_json(const SimulateOptions& o, const cost::SimConfig& config, const cost::SimResult& r,
                      const ArrivalReplay& replayed, const cost::ELinear& e, int slots, const cost::FleetCost& c,
                      std::size_t requests_in_workload) {
  const bool replaying = !o.replay_arrivals.empty();
  const nlohmann::json stages = stages_json(r, config.publish.publishers > 0, config.input.on());
  const char* process = replaying ? "replay" : o.burst_cv > 0 ? "gamma" : "poisson";
  nlohmann::json j = {{"requests", r.requests}, {"arrival_rate", replaying ? r.arrival_rate : o.rate}, {"seed", o.seed()},
                      {"arrivals", process}, {"arrival_cv", replaying ? r.arrival_cv : o.burst_cv > 0 ? o.burst_cv : 1.0},
                      {"drawn_arrival_rate", r.arrival_rate}, {"drawn_arrival_cv", r.arrival_cv},
                      {"gpu", o.pricing.scenario.gpu}, {"model", o.pricing.scenario.model}, {"gpus", o.pricing.scenario.gpus}, {"workers", o.workers},
                      {"gpu_slots", slots}, {"e_origin", e.origin}, {"e_alpha_us", e.alpha_us},
                      {"e_beta_us_per_token", e.beta_us_per_token}, {"predicted_total_s", r.span_s},
                      {"throughput_per_s", r.throughput_per_s}, {"stages", stages},
                      {"queue_wait_s", percentiles_json(r.queue_wait_s)}, {"latency_s", percentiles_json(r.latency_s)},
                      {"mean_in_system", r.mean_in_system}, {"bottleneck_stage", r.bottleneck_stage},
                      {"cost", cost_json(c)}};
  add_depth_and_services(j, r, requests_in_workload);
  if (replaying)
    j["replay"] = {{"source", o.replay_arrivals}, {"experiment", o.experiment}, {"arrival_stamp", replayed.stamp},
                   {"speedup", o.speedup}, {"records", replayed.times.size()}, {"unstamped", replayed.unstamped},
                   {"decoded", replayed.decoded}};
  if (config.input.on())
    j["input_queue"] = {{"batch", config.input.batch}, {"receive_s", config.input.receive_s},
                        {"delete_s", config.input.delete_s}, {"prefetch", config.input.prefetch}};
  if (config.publish.publishers > 0)
    j["publish"] = {{"publishers", config.publish.publishers}, {"capacity", config.publish.capacity},
                    {"publish_s", o.publish_ms / 1000}};
  if (config.consumer.consumers > 0) {
    j["consumer"] = {{"consumers", config.consumer.consumers}, {"batch", config.consumer.batch},
                     {"linger_s", config.consumer.linger_s}, {"write_s", config.consumer.write_s},
                     {"write_per_record_s", config.consumer.write_per_record_s}};
    j["stored_latency_s"] = percentiles_json(r.stored_latency_s);
  }
  j["saturated_stage"] = r.saturated_stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saturated_stage);
  std::printf("%s\n", j.dump(1).c_str());
}

void print_capacity_plan(const SimulateOptions& o, const cost::CapacityQuery& q, const cost::CapacityPlan& plan, int slots,
                         const cost::FleetCost& c) {
  if (o.json) {
    nlohmann::json j = {{"target_p99_s", q.target_p99_s}, {"arrival_rate", o.rate}, {"met", plan.met},
                        {"simulations", plan.simulations}, {"gpus_per_instance", o.pricing.scenario.gpus}, {"gpu_slots", slots}};
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
                o.target_p99_ms, o.rate, plan.instances, o.pricing.scenario.gpus, slots, plan.workers, plan.result.latency_s.p50,
                plan.result.latency_s.p99, plan.simulations, o.requests(), c.usd_per_hour, c.usd_per_request);
  } else {
    std::printf("target p99 %.4g ms at %.4g requests/s: not met: %s\n", o.target_p99_ms, o.rate, plan.reason.c_str());
  }
}

}  // namespace overhead::cli
