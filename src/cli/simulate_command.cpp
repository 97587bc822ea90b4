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
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "cli/cost_command_serving.hpp"
#include "cli/option_checks.hpp"
#include "cost/engine_sim.hpp"
#include "cost/scenario.hpp"
#include "cli/cost_command_workload.hpp"
#include "cli/simulate_command_arrivals.hpp"
#include "cli/simulate_command_options.hpp"
#include "cli/simulate_command_print.hpp"
#include "cli/simulate_command_replay.hpp"
#include "cost/pricing.hpp"
#include "cost/capacity.hpp"
#include "cost/chain_config.hpp"
#include "cost/fleet_cost.hpp"
#include "cost/length_distribution.hpp"
#include "cost/service_times.hpp"
#include "cost/cost_model.hpp"
#include "cost/fits_select.hpp"
#include "cost/profiles.hpp"
#include "cost/simulator.hpp"

namespace overhead::cli {

namespace {


bool exponential_flag(const std::string& value, const char* flag) {
  if (value == "fixed") return false;
  if (value == "exp") return true;
  throw cost::CostError(std::string(flag) + " must be fixed or exp, got \"" + value + "\"");
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

cost::EngineSimConfig engine_config(const SimulateOptions& o, const cost::Scenario& sc, const cost::ELinear& e, bool e_exp,
                                    const std::vector<cost::SimRequest>& requests) {
  cost::EngineSimConfig c = cost::engine_sim_config(sc, requests, cost::cpu_service(e, e_exp), o.workers, o.requests(), o.seed());
  if (o.concurrency > 0) {
    c.closed_loop = true;
    c.concurrency = o.concurrency;
    c.clients_in_step = o.in_step;
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
  const auto per_1m = cost::token_prices(c, requests);
  print_engine_run(o, sc, e, config, r, max_rate, c, per_1m, requests.size());
  return 0;
}

// The flags that exclude or need each other, refused with what to drop or add.
void check_modes(const SimulateOptions& o) {
  const bool replaying = !o.replay_arrivals.empty();
  const bool closed = o.concurrency > 0;
  if (o.in_step && !closed) throw cost::CostError("--in-step needs --concurrency (a closed loop)");
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
  const cost::CapacityQuery q = cost::capacity_query(config, o.target_p99_ms / 1000, slots);
  const auto plan = cost::plan_capacity(q);
  const auto c = plan.met ? cost::fleet_cost(scenario, plan.instances * o.pricing.scenario.gpus, plan.workers, plan.result.throughput_per_s)
                          : cost::FleetCost{};
  print_capacity_plan(o, q, plan, slots, c);
  return plan.met ? 0 : 1;
}

int run_simulate(const SimulateOptions& o) {
  try {
    check_modes(o);
    const bool replaying = !o.replay_arrivals.empty();
    const bool e_exp = exponential_flag(o.e_dist, "--e-dist");
    const bool d_exp = exponential_flag(o.d_dist, "--d-dist");
    const cost::ELinear e = cost::choose_e(o.e_us, o.fits, o.backend, o.case_number, o.tokenizer);
    cost::ScenarioSpec spec = o.pricing.scenario;
    spec.price_optional = true;  // latency needs no price: the $ figures are left out when none is given
    const cost::Scenario scenario = cost::make_scenario(spec);
    std::string workload_origin;
    const auto workload = load_workload(o.pricing.workload, o.workload_tokenizer, workload_origin,
                                        {cost::default_workloads_dir(o.pricing.scenario.profiles_dir),
                                         std::min<std::size_t>(o.requests(), 100000), o.seed()});
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
    if (!scenario.priced) std::printf("cost: not priced (no --gpu-usd-per-hour, --instance or price preset for the GPU)\n");
    else std::printf("cost: $%.4f/hour (1 instance x %d GPU(s) at $%.4f, %d worker(s) at $%.4f), $%.6g per request\n",
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
  cmd->add_option_function<std::size_t>(
         "--offline", [o](const std::size_t& n) { o->concurrency = static_cast<double>(n); o->offline = n; },
         "Offline benchmark: N requests all sent at once (every output token over the whole run); sets --requests")
      ->check(integer_in(1, 10'000'000));
  cmd->add_flag("--in-step", o->in_step,
                "With --concurrency: the clients start together, as a fixed-batch benchmark runs, and stay in step on equal "
                "requests (default: they join at the steady state's pace and drift apart)");
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
  add_e_flags(*cmd, o->fits, o->backend, o->case_number, o->tokenizer, o->e_us);
  cmd->add_option("--e-dist", o->e_dist, "E around its mean: fixed or exp")->capture_default_str();
  cmd->add_option("--d-dist", o->d_dist, "D around the roofline: fixed or exp")->capture_default_str();
  add_serving_flags(*cmd, o->pricing.scenario);
  cmd->add_option("--gpu-slots", o->gpu_slots,
                  "The per-request stage chain with this many GPU slots in all (default: the engine simulation)")
      ->check(integer_in(1, 10'000'000));
  cmd->add_option("--workload", o->pricing.workload,
                  "Tokens per request: in=N,out=M, a named length distribution (sharegpt, or sharegpt,in=N,out=M at other means: "
                  "data/workloads/, --requests draws by --seed), a JSONL file of token-count pairs ({\"input_tokens\": N, "
                  "\"output_tokens\": M} a line), or the seed's JSONL records (used in turn; input: the rendered prompt, "
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
    if (o->offline > 0) o->pricing.load.requests = o->offline;
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
