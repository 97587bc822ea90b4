// `overhead simulate`: the capacity simulator (src/cost/simulator.hpp) wired to the E fit and the
// GPU/model profiles: Poisson arrivals, W CPU workers with E(x), G GPU slots with D(y|x) from the
// roofline at the running batch; prints throughput, utilisation, waits, latency, saturation and the
// fleet's cost. With --target-p99, plans the fewest instances and workers (cost/capacity.hpp); with
// --replay, replays a measured run as a closed batch (simulate_command_replay.hpp); with
// --replay-arrivals, takes the arrivals from a run's records (simulate_command_arrivals.hpp). The
// input queue (--batch), the publisher pool (--publishers) and the consumer (--store-write-ms)
// are modelled when asked for.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "cli/cost_command_serving.hpp"
#include "cli/option_checks.hpp"
#include "cost/engine_sim.hpp"
#include "cost/latency_sketch.hpp"
#include "cost/scenario.hpp"
#include "cli/cost_command_workload.hpp"
#include "cli/simulate_command_arrivals.hpp"
#include "cli/simulate_command_replay.hpp"
#include "cost/pricing.hpp"
#include "cost/capacity.hpp"
#include "cost/chain_config.hpp"
#include "cost/fleet_cost.hpp"
#include "cost/service_times.hpp"
#include "cost/cost_model.hpp"
#include "cost/fits_select.hpp"
#include "cost/profiles.hpp"
#include "cost/simulator.hpp"
#include "report/simulation_figures.hpp"

namespace overhead::cli {

namespace {

// The deployment, the workload, --max-rate's targets and the requests and seed of every
// simulation live in `pricing`, the cost family's one struct; the rest is the simulator's own.
struct SimulateOptions {
  cost::PricingOptions pricing;
  std::vector<std::string> fits;
  std::string backend, tokenizer, workload_tokenizer = "llama-3.3-70b-instruct", e_us, e_dist = "fixed", d_dist = "fixed";
  int case_number = 5, workers = 1, gpu_slots = 0;
  double rate = 0, burst_cv = 0, target_p99_ms = 0, concurrency = 0;
  bool max_rate() const { return pricing.load.mode == cost::Load::max_rate; }
  const cost::LatencyTargets& targets() const { return pricing.load.targets; }
  std::size_t requests() const { return pricing.load.requests; }
  std::uint64_t seed() const { return pricing.load.seed; }
  bool json = false;
  std::string plots;  // --plots DIR: the run's figures as SVG
  // Arrivals replayed from a store's records.
  std::string replay_arrivals, experiment, arrival_stamp = "auto";
  double speedup = 1;
  // The input queue (off unless --batch), the publisher pool (off unless --publishers) and the
  // consumer (off unless --consumers or --store-write-ms). A negative time: from the fit or 0.
  std::size_t batch = 0;
  std::string prefetch = "on";
  double receive_ms = -1, delete_ms = -1;
  int publishers = 0, consumers = 0;
  std::size_t publish_capacity = 0, consumer_batch = 200;
  double publish_ms = 0, linger_ms = 5;
  std::string store_write_ms;
};

bool exponential_flag(const std::string& value, const char* flag) {
  if (value == "fixed") return false;
  if (value == "exp") return true;
  throw cost::CostError(std::string(flag) + " must be fixed or exp, got \"" + value + "\"");
}

// --plots DIR: queue depth over time and the latency percentiles, as SVG files.
void write_simulation_plots(const SimulateOptions& o, const cost::SimResult& r) {
  const std::string title = o.pricing.scenario.gpu + " x" + std::to_string(o.pricing.scenario.gpus) + " serving " + o.pricing.scenario.model + ", " +
                            std::to_string(o.workers) + " CPU worker(s), " + std::to_string(r.requests) + " requests";
  for (const auto& f : report::simulation_figures(r, title)) write_output_file(o.plots, f.name + ".svg", report::svg_file(f));
}

nlohmann::json percentiles_json(const cost::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}};
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

// "A" or "A,B" in milliseconds -> seconds: a store write's fixed part and its part per record.
std::pair<double, double> write_times(const std::string& text) {
  if (text.empty()) return {0, 0};
  if (text.find(',') != std::string::npos) {
    const auto [a, b] = cost::parse_number_pair(text, "--store-write-ms");
    return {a / 1000, b / 1000};
  }
  try {
    std::size_t used = 0;
    const double a = std::stod(text, &used);
    if (used == text.size()) return {a / 1000, 0};
  } catch (const std::exception&) {
  }
  throw cost::CostError("--store-write-ms must be MS or MS,MS_PER_RECORD, got \"" + text + "\"");
}

// The input queue, the publisher pool and the consumer from the flags (each off unless asked
// for), and a line per part saying what was set, for the text output.
std::string pipeline_around(const SimulateOptions& o, cost::ChainSpec& spec) {
  std::string text;
  char line[320];
  if (o.batch > 0) {
    if (o.batch > 10) throw cost::CostError("--batch must be 1 to 10 (a queue's receive gives at most 10)");
    if (o.prefetch != "on" && o.prefetch != "off") throw cost::CostError("--prefetch must be on or off, got \"" + o.prefetch + "\"");
    spec.input.batch = o.batch;
    spec.input.prefetch = o.prefetch == "on";
    double half_turnover = 0;
    std::string origin = "typed in";
    if (o.receive_ms < 0 || o.delete_ms < 0) {
      origin = "0: give --receive-ms/--delete-ms or --fits";
      if (!o.fits.empty()) {
        const std::string file = cost::select_fits(o.fits, o.backend, o.case_number);
        std::string chosen;
        half_turnover = cost::half_turnover_s(file, o.case_number, o.tokenizer, chosen);
        origin = "half of the turnover term of " + file + " (" + chosen + ") each";
      }
    }
    spec.input.receive_s = o.receive_ms >= 0 ? o.receive_ms / 1000 : half_turnover;
    spec.input.delete_s = o.delete_ms >= 0 ? o.delete_ms / 1000 : half_turnover;
    std::snprintf(line, sizeof line, "input queue: receives of up to %zu, receive %.4g ms, delete %.4g ms (%s), prefetch %s\n",
                  spec.input.batch, spec.input.receive_s * 1000, spec.input.delete_s * 1000, origin.c_str(),
                  o.prefetch.c_str());
    text += line;
  } else if (o.receive_ms >= 0 || o.delete_ms >= 0) {
    throw cost::CostError("--receive-ms and --delete-ms need --batch (the input queue's receive)");
  }
  if (o.publishers < 0 || o.consumers < 0) throw cost::CostError("--publishers and --consumers must be >= 0");
  if (o.publishers > 0) {
    if (o.publish_ms < 0) throw cost::CostError("--publish-ms must be >= 0");
    spec.publishers = o.publishers;
    spec.publish_capacity = o.publish_capacity;
    spec.publish_s = o.publish_ms / 1000;
    std::snprintf(line, sizeof line, "publisher pool: %d thread(s), up to %zu records waiting (then the worker blocks), "
                  "%.4g ms per publish\n", o.publishers,
                  o.publish_capacity ? o.publish_capacity : 2 * static_cast<std::size_t>(o.publishers), o.publish_ms);
    text += line;
  } else if (o.publish_capacity > 0 || o.publish_ms > 0) {
    throw cost::CostError("--publish-capacity and --publish-ms need --publishers");
  }
  const int consumers = o.consumers > 0 ? o.consumers : (o.store_write_ms.empty() ? 0 : 1);
  if (consumers > 0) {
    if (o.publishers == 0) throw cost::CostError("the consumer stage needs --publishers (the records reach it through the pool)");
    if (o.linger_ms < 0 || o.consumer_batch < 1) throw cost::CostError("--linger-ms must be >= 0 and --consumer-batch >= 1");
    const auto [fixed, per_record] = write_times(o.store_write_ms);
    if (fixed < 0 || per_record < 0) throw cost::CostError("--store-write-ms must be >= 0");
    spec.consumer = {consumers, o.consumer_batch, o.linger_ms / 1000, fixed, per_record};
    std::snprintf(line, sizeof line, "consumer: %d, writes of up to %zu records after %.4g ms of linger, %.4g ms + %.4g ms per record\n",
                  consumers, o.consumer_batch, o.linger_ms, fixed * 1000, per_record * 1000);
    text += line;
  }
  if (!text.empty()) text.pop_back();
  return text;
}

// The per-request stage chain keeps every request in memory; the engine simulation does not.
constexpr std::size_t kMaxChainRequests = 5'000'000;

nlohmann::json latency_json(const cost::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}};
}

cost::EngineSimConfig engine_config(const SimulateOptions& o, const cost::Scenario& sc, const cost::ELinear& e, bool e_exp,
                                    const std::vector<cost::SimRequest>& requests) {
  cost::EngineSimConfig c = cost::engine_sim_config(sc, requests, cost::cpu_service(e, e_exp), o.workers, o.requests(), o.seed());
  if (o.concurrency > 0) {
    c.closed_loop = true;
    c.concurrency = o.concurrency;
  } else {
    c.arrival_rate = o.rate;
    if (o.burst_cv > 0) {
      c.arrivals = cost::Arrivals::gamma;
      c.arrival_cv = o.burst_cv;
    }
  }
  return c;
}

int run_engine(const SimulateOptions& o, const cost::Scenario& sc, const cost::ELinear& e, bool e_exp,
               const std::vector<cost::SimRequest>& requests) {
  auto config = engine_config(o, sc, e, e_exp, requests);
  cost::MaxRate max_rate;
  cost::SimResult r;
  if (o.max_rate()) {
    max_rate = cost::find_max_rate(config, o.targets());
    if (!max_rate.met) {
      std::fprintf(stderr, "overhead simulate: no rate meets TTFT p99 <= %g ms and TPOT p99 <= %g ms\n",
                   o.targets().ttft_p99_ms, o.targets().tpot_p99_ms);
      return 1;
    }
    r = max_rate.at;
  } else {
    r = cost::simulate_engine(config);
  }
  if (!o.plots.empty()) write_simulation_plots(o, r);
  const auto c = cost::fleet_cost(sc, o.pricing.scenario.gpus, o.workers, r.requests_per_s);
  double mean_in = 0, mean_out = 0;
  for (const auto& q : requests) {
    mean_in += q.input_tokens;
    mean_out += q.output_tokens;
  }
  mean_in /= static_cast<double>(requests.size());
  mean_out /= static_cast<double>(requests.size());
  const double usd_per_1m_out = mean_out > 0 ? c.usd_per_request / mean_out * 1e6 : 0;
  const double usd_per_1m_blended = mean_in + mean_out > 0 ? c.usd_per_request / (mean_in + mean_out) * 1e6 : 0;
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
    std::printf("%-22s %10s %10s %10s %10s\n", "seconds", "mean", "p50", "p95", "p99");
    std::printf("%-22s %10.4g %10.4g %10.4g %10.4g\n", "TTFT", r.ttft_s.mean, r.ttft_s.p50, r.ttft_s.p95, r.ttft_s.p99);
    std::printf("%-22s %10.4g %10.4g %10.4g %10.4g\n", "TPOT", r.tpot_s.mean, r.tpot_s.p50, r.tpot_s.p95, r.tpot_s.p99);
    std::printf("fleet: %.4g requests/s, %.4g output tokens/s, mean batch %.1f per replica\n", r.requests_per_s,
                r.output_tokens_per_s, r.mean_batch);
    std::printf("cost: $%.4f/hour (%d GPU(s) at $%.4f, %d worker(s) at $%.4f), $%.6g per request, $%.4f per 1M output tokens\n",
                c.usd_per_hour, o.pricing.scenario.gpus, c.gpu_usd_per_hour, o.workers, c.cpu_usd_per_hour, c.usd_per_request,
                usd_per_1m_out);
    return 0;
  }
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& st : r.stages)
    stages.push_back({{"name", st.name}, {"servers", st.servers}, {"utilization", st.utilization},
                      {"offered_load", st.offered_load}, {"mean_batch", st.mean_batch},
                      {"mean_queue_length", st.mean_queue_length}, {"max_queue_length", st.max_queue_length},
                      {"saturated", st.saturated}, {"wait_s", latency_json(st.wait_s)},
                      {"service_s", latency_json(st.service_s)}, {"request_path", true}});
  nlohmann::json j = {{"requests", r.requests}, {"seed", o.seed()}, {"arrivals", o.concurrency > 0 ? "closed" : o.burst_cv > 0 ? "gamma" : "poisson"},
                      {"arrival_rate", o.concurrency > 0 ? r.requests_per_s : config.arrival_rate},
                      {"arrival_cv", o.burst_cv > 0 ? o.burst_cv : 1.0},
                      {"gpu", sc.gpu.name}, {"model", sc.model.name}, {"gpus", o.pricing.scenario.gpus}, {"tp", sc.serving.tp},
                      {"replicas", sc.replicas}, {"precision", precision}, {"kv_dtype", sc.serving.kv_dtype},
                      {"engine", engine_json(sc.serving.engine, sc.replica)}, {"workers", o.workers},
                      {"e_origin", e.origin}, {"e_alpha_us", e.alpha_us}, {"e_beta_us_per_token", e.beta_us_per_token},
                      {"predicted_total_s", r.span_s}, {"throughput_per_s", r.throughput_per_s},
                      {"requests_per_s", r.requests_per_s}, {"output_tokens_per_s", r.output_tokens_per_s},
                      {"ttft_s", latency_json(r.ttft_s)}, {"tpot_s", latency_json(r.tpot_s)},
                      {"latency_s", latency_json(r.latency_s)}, {"queue_wait_s", latency_json(r.queue_wait_s)},
                      {"mean_batch", r.mean_batch}, {"steps", r.steps}, {"stages", stages},
                      {"mean_in_system", r.mean_in_system}, {"bottleneck_stage", r.bottleneck_stage},
                      {"percentile_relative_error", cost::LatencySketch::kRelativeError},
                      {"cost", cost_json(c)}, {"usd_per_request", c.usd_per_request},
                      {"usd_per_1m_output_tokens", usd_per_1m_out}, {"usd_per_1m_tokens_blended", usd_per_1m_blended}};
  if (o.concurrency > 0) j["concurrency"] = o.concurrency;
  if (o.max_rate())
    j["max_rate"] = {{"requests_per_s", max_rate.rate}, {"ttft_p99_ms", o.targets().ttft_p99_ms}, {"tpot_p99_ms", o.targets().tpot_p99_ms},
                     {"simulations", max_rate.simulations}};
  nlohmann::json depth = {{"t_s", r.depth_times}};
  for (const auto& st : r.stages) depth[st.name] = st.depth;
  j["queue_depth_over_time"] = depth;
  j["requests_in_workload"] = requests.size();
  for (const auto& st : r.stages) {
    if (st.name == "cpu") j["e_s"] = latency_json(st.service_s);
    if (st.name == "gpu") j["d_s"] = latency_json(st.service_s);
  }
  j["saturated_stage"] = r.saturated_stage.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.saturated_stage);
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
}

// The flags that exclude or need each other, refused with what to drop or add.
void check_modes(const SimulateOptions& o) {
  const bool replaying = !o.replay_arrivals.empty();
  const bool closed = o.concurrency > 0;
  if (closed && (o.rate > 0 || replaying || o.max_rate()))
    throw cost::CostError("--concurrency (a closed loop) excludes --rate, --max-rate and --replay-arrivals");
  if (o.max_rate() && (o.rate > 0 || replaying)) throw cost::CostError("--max-rate searches the rate: drop --rate");
  if (o.max_rate() && !(o.targets().ttft_p99_ms > 0 || o.targets().tpot_p99_ms > 0))
    throw cost::CostError("--max-rate needs --ttft-p99-ms and/or --tpot-p99-ms");
  if (!replaying && !closed && !o.max_rate() && !(o.rate > 0))
    throw cost::CostError("--rate must be > 0 (requests per second), or give --concurrency, --max-rate, --replay or --replay-arrivals");
  if (replaying && (o.rate > 0 || o.burst_cv > 0))
    throw cost::CostError("--replay-arrivals takes the arrivals from the records: drop --rate and --burst-cv");
  if (o.workers < 1) throw cost::CostError("--workers must be at least 1");
  if (o.burst_cv < 0) throw cost::CostError("--burst-cv must be > 0 (1 = Poisson-like, above 1 = bursts)");
}

// E typed in, from a fit, or 0.
cost::ELinear e_of(const SimulateOptions& o) {
  if (!o.e_us.empty()) {
    const auto [a, b] = cost::parse_number_pair(o.e_us, "--e-us");
    return {a, b, "typed in"};
  }
  if (!o.fits.empty()) return cost::e_from_fits(cost::select_fits(o.fits, o.backend, o.case_number), o.case_number, o.tokenizer);
  if (!o.backend.empty()) throw cost::CostError("--backend needs --fits (one fits.json per backend)");
  return {0, 0, "none given (E = 0)"};
}

// The per-request stage chain (cost/chain_config.hpp): the arrivals (drawn, or replayed from
// records), the pipeline's parts around the workers (`around` says which), the workers with E and
// the GPU slots with D.
cost::SimConfig chain_config(const SimulateOptions& o, std::vector<cost::SimRequest> requests, const ArrivalReplay& replayed,
                             const cost::Scenario& scenario, const cost::ELinear& e, int slots, std::string& around) {
  cost::ChainSpec spec;
  spec.rate = o.rate;
  spec.burst_cv = o.burst_cv;
  spec.replay = !o.replay_arrivals.empty();
  if (spec.replay) spec.replayed = replayed.times;
  spec.requests = o.requests();
  spec.seed = o.seed();
  spec.workload = std::move(requests);
  spec.workers = o.workers;
  spec.e = e;
  spec.e_exponential = exponential_flag(o.e_dist, "--e-dist");
  spec.d_exponential = exponential_flag(o.d_dist, "--d-dist");
  spec.gpu_slots = slots;
  around = pipeline_around(o, spec);
  return cost::chain_config(std::move(spec), scenario);
}

// --target-p99: the fewest GPU instances, then workers, meeting the p99 at --rate (capacity.hpp).
int plan_for_target(const SimulateOptions& o, const cost::Scenario& scenario, const cost::SimConfig& config, int slots,
                    bool replaying) {
  if (replaying || config.input.on() || config.publish.publishers > 0)
    throw cost::CostError("--target-p99 plans workers and GPUs under --rate alone: drop --replay-arrivals, --batch, "
                          "--publishers and the consumer's flags");
  cost::CapacityQuery q;
  q.traffic = config;
  q.target_p99_s = o.target_p99_ms / 1000;
  q.cpu = config.stages[0].service_s;
  q.gpu = config.stages[1].service_s;
  q.gpu_slots = slots;
  const auto plan = cost::plan_capacity(q);
  const auto c = plan.met ? cost::fleet_cost(scenario, plan.instances * o.pricing.scenario.gpus, plan.workers, plan.result.throughput_per_s)
                          : cost::FleetCost{};
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
  return plan.met ? 0 : 1;
}

// How the requests arrived, for the text output.
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

// Every stage of the chain's run, with the pipeline's parts where they ran.
nlohmann::json chain_stages_json(const cost::SimConfig& config, const cost::SimResult& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : r.stages) {
    nlohmann::json st = {{"name", s.name}, {"servers", s.servers}, {"utilization", s.utilization},
                         {"offered_load", s.offered_load}, {"mean_batch", s.mean_batch},
                         {"mean_queue_length", s.mean_queue_length}, {"max_queue_length", s.max_queue_length},
                         {"saturated", s.saturated}, {"wait_s", percentiles_json(s.wait_s)},
                         {"service_s", percentiles_json(s.service_s)}, {"request_path", s.request_path}};
    if (s.name == "cpu" && config.publish.publishers > 0) {
      st["blocked_share"] = s.blocked_share;
      st["blocked_s"] = percentiles_json(s.blocked_s);
    }
    if (s.rounds > 0) {
      st["rounds"] = s.rounds;
      st["mean_round_size"] = s.mean_round_size;
    }
    if (s.name == "cpu" && config.input.on()) st["io_share"] = s.io_share;
    stages.push_back(std::move(st));
  }
  return stages;
}

// The stage chain's run as JSON.
void print_chain_json(const SimulateOptions& o, const cost::SimConfig& config, const cost::SimResult& r,
                      const ArrivalReplay& replayed, const cost::ELinear& e, int slots, const cost::FleetCost& c,
                      std::size_t requests_in_workload) {
  const bool replaying = !o.replay_arrivals.empty();
  const nlohmann::json stages = chain_stages_json(config, r);
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
  nlohmann::json depth = {{"t_s", r.depth_times}};
  for (const auto& s : r.stages) depth[s.name] = s.depth;
  j["queue_depth_over_time"] = depth;
  j["requests_in_workload"] = requests_in_workload;
  for (const auto& s : r.stages) {
    if (s.name == "cpu") j["e_s"] = percentiles_json(s.service_s);
    if (s.name == "gpu") j["d_s"] = percentiles_json(s.service_s);
  }
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

int run_simulate(const SimulateOptions& o) {
  try {
    check_modes(o);
    const bool replaying = !o.replay_arrivals.empty();
    const bool e_exp = exponential_flag(o.e_dist, "--e-dist");
    const bool d_exp = exponential_flag(o.d_dist, "--d-dist");
    const cost::ELinear e = e_of(o);
    const cost::Scenario scenario = cost::make_scenario(o.pricing.scenario);
    const auto workload = is_records_workload(o.pricing.workload)
                              ? workload_from_records(o.pricing.workload, o.workload_tokenizer).workload
                              : cost::parse_workload(o.pricing.workload);
    ArrivalReplay replayed;
    std::vector<cost::SimRequest> requests;
    if (replaying) {
      replayed = replay_arrivals(o.replay_arrivals, o.experiment, o.arrival_stamp, o.speedup, workload);
      requests = replayed.requests;
    } else {
      for (std::size_t i = 0; i < workload.input_tokens.size(); ++i)
        requests.push_back({workload.input_tokens[i], workload.output_tokens[i]});
    }
    const bool pipeline = replaying || o.batch > 0 || o.publishers > 0 || o.consumers > 0 || !o.store_write_ms.empty() ||
                          o.target_p99_ms > 0 || o.gpu_slots > 0 || d_exp;
    if (!pipeline) return run_engine(o, scenario, e, e_exp, requests);
    // The per-request stage chain (the pipeline's parts, replays, planning) holds every request:
    // its --requests is bounded.
    if (o.requests() > kMaxChainRequests)
      throw cost::CostError("--requests above " + std::to_string(kMaxChainRequests) +
                            " needs the engine simulation (drop --replay-arrivals, --batch, --publishers, the consumer's "
                            "flags, --target-p99, --gpu-slots and --d-dist exp)");
    const int slots = o.gpu_slots > 0 ? o.gpu_slots : cost::gpu_slots_for(scenario, requests);
    std::string around;
    const cost::SimConfig config = chain_config(o, std::move(requests), replayed, scenario, e, slots, around);
    if (o.target_p99_ms > 0) return plan_for_target(o, scenario, config, slots, replaying);

    const auto r = cost::simulate(config);
    if (!o.plots.empty()) write_simulation_plots(o, r);
    const auto c = cost::fleet_cost(scenario, o.pricing.scenario.gpus, o.workers, r.throughput_per_s);
    if (o.json) {
      print_chain_json(o, config, r, replayed, e, slots, c, replaying ? replayed.times.size() : workload.input_tokens.size());
      return 0;
    }
    print_text(o, chain_arrivals_text(o, replayed, r), around, e, r);
    if (replaying)
      std::printf("replayed %zu records (%zu without a received stamp left out); output tokens: %zu from the records' "
                  "decoder stamps, the rest from --workload\n",
                  replayed.times.size(), replayed.unstamped, replayed.decoded);
    std::printf("cost: $%.4f/hour (1 instance x %d GPU(s) at $%.4f, %d worker(s) at $%.4f), $%.6g per request\n",
                c.usd_per_hour, o.pricing.scenario.gpus, c.gpu_usd_per_hour, o.workers, c.cpu_usd_per_hour, c.usd_per_request);
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
  cmd->add_option("--rate", o->rate, "Arrival rate, requests per second (Poisson unless --burst-cv)")->check(number_in(1e-9, 1e9));
  cmd->add_option("--concurrency", o->concurrency,
                  "Closed loop: this many clients, each sending its next request when one ends (instead of --rate)")
      ->check(number_in(1, 1e7));
  add_max_rate_flags(*cmd, o->pricing.load, "Max rate");
  cmd->add_option("--burst-cv", o->burst_cv,
                  "Bursts: gamma inter-arrival gaps with this coefficient of variation at the same mean --rate (> 1 = burstier)")
      ->check(number_in(1e-3, 1e3));
  cmd->add_option("--target-p99", o->target_p99_ms,
                  "Capacity planning: the fewest GPU instances, then CPU workers, whose end-to-end p99 (ms) meets this at --rate")
      ->check(number_in(1e-6, 1e12));
  cmd->add_option("--requests", o->pricing.load.requests, "Requests to simulate (memory does not grow with it)")
      ->check(integer_in(1, 1'000'000'000'000))->capture_default_str();
  cmd->add_option("--seed", o->pricing.load.seed, "Random seed (same seed, same result)")->check(integer_in(0, INT64_MAX))->capture_default_str();
  CLI::Option* workers = cmd->add_option("--workers", o->workers, "CPU workers (the E stage; with --replay default: the run's)")
                             ->check(integer_in(1, 1'000'000))->capture_default_str();
  cmd->add_option("--fits", o->fits,
                  "fits.json from `overhead analyze` (E = alpha + beta*tokens); repeat once per backend with --backend");
  cmd->add_option("--backend", o->backend,
                  "With several --fits: the backend whose fit to use (the fits.json's store scheme: sqlite, postgres, ...)");
  cmd->add_option("--case", o->case_number, "Case whose E fit to use")->check(integer_in(0, 1000))->capture_default_str();
  cmd->add_option("--tokenizer", o->tokenizer, "Tokenizer whose E fit to use (default: the first of the case)");
  cmd->add_option("--e-us", o->e_us, "E typed in: ALPHA,BETA in microseconds (alpha + beta*input tokens)")
      ->check(number_pair_check());
  cmd->add_option("--e-dist", o->e_dist, "E around its mean: fixed or exp")->capture_default_str();
  cmd->add_option("--d-dist", o->d_dist, "D around the roofline: fixed or exp")->capture_default_str();
  add_serving_flags(*cmd, o->pricing.scenario);
  cmd->add_option("--gpu-slots", o->gpu_slots,
                  "The per-request stage chain with this many GPU slots in all (default: the engine simulation)")
      ->check(integer_in(1, 10'000'000));
  cmd->add_option("--workload", o->pricing.workload,
                  "Tokens per request: in=N,out=M, or the seed's JSONL records (used in turn; input: the rendered prompt, "
                  "output: the answer)")
      ->capture_default_str();
  cmd->add_option("--workload-tokenizer", o->workload_tokenizer, "Tokenizer that counts a records workload")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "JSON output");
  cmd->add_option("--plots", o->plots, "Write the queue depth over time and the latency percentiles per stage as SVG here");
  cmd->add_option("--replay", replay->source,
                  "Closed batch: replay a measured run's items (store URL with --experiment, or a timeline .csv[.gz]) "
                  "with E from --fits (model b) instead of Poisson arrivals");
  cmd->add_option("--experiment", replay->experiment,
                  "With --replay or --replay-arrivals on a store: the run's experiment (e.g. jmtbench-case5)");
  cmd->add_option("--replay-arrivals", o->replay_arrivals,
                  "Open workload: arrivals, order and token counts from a store's records (with --experiment) instead of "
                  "--rate; E from --fits or --e-us, D from the profiles");
  cmd->add_option("--arrival-stamp", o->arrival_stamp,
                  "With --replay-arrivals: received (each record arrives when a worker took it up), upfront (all at 0, "
                  "as `overhead run` enqueues), or auto (upfront for records of run/worker, received for serve's)")
      ->capture_default_str();
  cmd->add_option("--speedup", o->speedup, "With --replay-arrivals: divide the gaps between arrivals by this")
      ->check(number_in(1e-9, 1e9))->capture_default_str();
  CLI::Option* batch = cmd->add_option("--batch", replay->batch,
                                       "Items per receive of the input queue, 1-10 (--replay default: the run's; else the "
                                       "input queue is modelled only when given)")
                           ->check(integer_in(1, 10));
  cmd->add_option("--prefetch", replay->prefetch, "With --batch: on or off (receive/delete in a second thread)")->capture_default_str();
  cmd->add_option("--receive-ms", o->receive_ms, "With --batch: one receive's round trip (default: half the fit's turnover term)")
      ->check(number_in(0, 1e9));
  cmd->add_option("--delete-ms", o->delete_ms, "With --batch: one batch delete's round trip (default: half the fit's turnover term)")
      ->check(number_in(0, 1e9));
  cmd->add_option("--publishers", o->publishers,
                  "Model the asynchronous log publisher pool after E with this many threads (0 = not modelled)")
      ->check(integer_in(0, 100000))->capture_default_str();
  cmd->add_option("--publish-capacity", o->publish_capacity,
                  "Records that may wait for a publisher thread before the worker blocks (default 2 x publishers)")
      ->check(integer_in(0, 100000000));
  cmd->add_option("--publish-ms", o->publish_ms, "One record's publish, milliseconds")->check(number_in(0, 1e9))->capture_default_str();
  cmd->add_option("--consumers", o->consumers, "Model the consumer storing the records (default: 1 with --store-write-ms)")
      ->check(integer_in(0, 100000));
  cmd->add_option("--store-write-ms", o->store_write_ms, "One store write of the consumer: MS or MS,MS_PER_RECORD");
  cmd->add_option("--consumer-batch", o->consumer_batch, "Records per store write")->check(integer_in(1, 1000000))->capture_default_str();
  cmd->add_option("--linger-ms", o->linger_ms, "How long a consumer's round collects records before it writes")
      ->check(number_in(0, 1e9))->capture_default_str();
  cmd->add_option("--max-in-flight", replay->max_in_flight, "With --replay: items received but not settled (0 = 4 x batch)")
      ->check(integer_in(0, 100000000));
  cmd->add_option("--residuals", replay->residuals,
                  "With --replay: a fitted run (store URL or timeline) whose residuals against --fits give E its spread");
  cmd->add_option("--replications", replay->replications, "With --residuals: simulated repetitions (total = their mean)")
      ->check(integer_in(1, 10000))->capture_default_str();
  cmd->add_option("--residuals-experiment", replay->residuals_experiment, "The experiment of --residuals on a store");
  cmd->add_option("--cores", replay->cores,
                  "With --replay: CPU cores the workers share with the consumer and publishers (default: this machine's)")
      ->check(number_in(1e-3, 1e6));
  cmd->add_option("--other-cpu", replay->other_cpu,
                  "With --replay: the consumer's and publishers' CPU per item as a multiple of the worker's (a run's "
                  "summary.json: process_cpu_us_per_item / worker_cpu_us_per_item - 1)")
      ->check(number_in(0, 1e6))->capture_default_str();
  cmd->add_option("--fitted-workers", replay->fitted_workers,
                  "With --replay: the workers of the run --fits was made on (default: the --residuals run's, else 1)")
      ->check(integer_in(1, 1'000'000));
  cmd->add_flag("--measured-only", replay->measured_only, "With --replay: the run's measured total and cycle percentiles only");
  cmd->add_option("--write-timeline", replay->write_timeline, "With --replay: write the run's timeline CSV and stop");
  cmd->callback([o, replay, workers, batch, &exit_code] {
    if (!replay->source.empty() && !o->replay_arrivals.empty()) {
      std::fprintf(stderr, "overhead simulate: --replay (a closed batch) and --replay-arrivals (an open workload) "
                           "exclude each other\n");
      exit_code = 1;
      return;
    }
    if (!replay->source.empty()) {
      try {
        replay->fits = o->fits.empty() ? "" : cost::select_fits(o->fits, o->backend, o->case_number);
      } catch (const std::exception& ex) {
        std::fprintf(stderr, "overhead simulate: %s\n", ex.what());
        exit_code = 1;
        return;
      }
      replay->case_number = o->case_number;
      replay->seed = o->seed();
      replay->json = o->json;
      replay->workers = workers->count() ? o->workers : 0;
      if (!batch->count()) replay->batch = 0;
      exit_code = run_simulate_replay(*replay);
      return;
    }
    o->experiment = replay->experiment;
    o->prefetch = replay->prefetch;
    o->batch = batch->count() ? replay->batch : 0;
    if (batch->count() && replay->batch == 0) {
      std::fprintf(stderr, "overhead simulate: --batch must be 1 to 10\n");
      exit_code = 1;
      return;
    }
    exit_code = run_simulate(*o);
  });
}

}  // namespace overhead::cli
