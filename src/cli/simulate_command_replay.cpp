#include "cli/simulate_command_replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <thread>
#include <nlohmann/json.hpp>

#include "backends/open.hpp"
#include "cli/cost_command_serving.hpp"
#include "cost/closed_batch.hpp"
#include "cost/replay_inputs.hpp"
#include "cost/timeline.hpp"
#include "ports/store.hpp"

namespace overhead::cli {
namespace {

bool is_timeline_file(const std::string& source) {
  const auto ends = [&](const std::string& tail) {
    return source.size() >= tail.size() && source.compare(source.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".csv") || ends(".csv.gz");
}

// A store's records of one experiment as a timeline, times from the run's first start.
std::vector<cost::TimelineItem> timeline_from_store(const std::string& url, const std::string& experiment,
                                                    std::size_t& unstamped) {
  if (experiment.empty()) throw cost::CostError("--experiment is required with a store URL");
  auto store = backends::open_store(url, backends::Access::existing);
  const auto records = ports::scan_in_key_order(*store, experiment);
  if (records.empty()) throw cost::CostError("experiment '" + experiment + "' has no records in " + store->url());
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const auto& r : records)
    if (r.received > 0) origin = std::min(origin, r.received);
  std::vector<cost::TimelineItem> items;
  unstamped = 0;
  for (const auto& r : records) {
    if (r.received <= 0) {
      ++unstamped;
      continue;
    }
    const std::int64_t last = std::max({r.received, r.render_start, r.render_end, r.encode_end, r.publish_start,
                                        r.publish_acked, r.input_deleted});
    items.push_back({r.tokenizer, r.worker, r.seq, r.batch, r.batch_boundary, static_cast<double>(r.token_count),
                     (r.received - origin) / 1000, (last - origin) / 1000});
  }
  return items;
}

std::vector<cost::TimelineItem> load(const std::string& source, const std::string& experiment, std::size_t& unstamped) {
  unstamped = 0;
  if (is_timeline_file(source)) return cost::read_timeline(source);
  return timeline_from_store(source, experiment, unstamped);
}

double error(double predicted, double measured) { return measured != 0 ? predicted / measured - 1 : NAN; }

}  // namespace

int run_simulate_replay(const ReplayOptions& o) {
  try {
    std::size_t unstamped = 0;
    const auto run = load(o.source, o.experiment, unstamped);
    if (run.empty()) throw cost::CostError(o.source + ": no timed items");
    if (!o.write_timeline.empty()) {
      cost::write_timeline(o.write_timeline, run);
      std::printf("%zu items written to %s%s\n", run.size(), o.write_timeline.c_str(),
                  unstamped ? (" (" + std::to_string(unstamped) + " records without a received stamp left out)").c_str() : "");
      return 0;
    }
    if (o.measured_only) {
      const cost::MeasuredRun m = cost::measure(run);
      const nlohmann::json j = {{"source", o.source}, {"items", run.size()}, {"measured_workers", m.workers},
                                {"measured_batch", m.batch}, {"measured_total_s", m.total_s},
                                {"measured_cycle_us", percentiles_json(m.cycle_us)}};
      std::printf("%s\n", o.json ? j.dump(1).c_str() : j.dump().c_str());
      return 0;
    }
    if (o.fits.empty()) throw cost::CostError("--fits is required with --replay (E from a fit, not the measured durations)");
    if (o.prefetch != "on" && o.prefetch != "off") throw cost::CostError("--prefetch must be on or off, got \"" + o.prefetch + "\"");
    const auto fits = cost::e_batch_from_fits(o.fits, o.case_number);
    const cost::MeasuredRun measured = cost::measure(run);

    cost::ClosedBatchConfig config;
    config.workers = o.workers > 0 ? o.workers : static_cast<int>(measured.workers);
    config.batch = o.batch > 0 ? o.batch : measured.batch;
    config.prefetch = o.prefetch == "on";
    config.max_in_flight = o.max_in_flight;
    config.seed = o.seed;
    config.replications = o.replications;
    config.cpu.cores = o.cores > 0 ? o.cores : std::max(1u, std::thread::hardware_concurrency());
    config.cpu.other_per_item = o.other_cpu;
    config.cpu.fitted_workers = o.fitted_workers > 0 ? o.fitted_workers : 1;
    std::string spread = "none (E as fitted)";
    if (!o.residuals.empty()) {
      std::size_t ignored = 0;
      const auto fitted_run = load(o.residuals, o.residuals_experiment, ignored);
      if (o.fitted_workers <= 0) config.cpu.fitted_workers = static_cast<int>(std::max<std::size_t>(1, cost::measure(fitted_run).workers));
      const auto pools = cost::spread_pools(fitted_run, fits);
      config.spread = pools.plain;
      config.turnover_spread = pools.turnover;
      spread = "measured/fitted ratios of " + o.residuals + " (" + std::to_string(pools.plain.ratios.size()) +
               " size bins, " + std::to_string(pools.turnover.ratios.size()) + " for turnover items)";
    }
    const auto in = cost::replay_items(run, fits);
    const auto p = cost::simulate_closed_batch(in.items, in.fits, config);

    if (o.json) {
      nlohmann::json j = {{"source", o.source}, {"items", run.size()}, {"workers", config.workers},
                          {"batch", config.batch}, {"prefetch", config.prefetch}, {"fits", o.fits},
                          {"spread", spread}, {"seed", o.seed},
                          {"cpu", {{"cores", config.cpu.cores}, {"other_per_item", config.cpu.other_per_item},
                                   {"fitted_workers", config.cpu.fitted_workers}, {"stretch", p.cpu_stretch}}}, {"replications", config.replications}, {"batches", p.batches},
                          {"predicted_total_s", p.total_s}, {"predicted_cycle_us", percentiles_json(p.cycle_us)},
                          {"measured_total_s", measured.total_s}, {"measured_cycle_us", percentiles_json(measured.cycle_us)},
                          {"measured_workers", measured.workers}, {"measured_batch", measured.batch},
                          {"error", {{"total", error(p.total_s, measured.total_s)},
                                     {"p50", error(p.cycle_us.p50, measured.cycle_us.p50)},
                                     {"p99", error(p.cycle_us.p99, measured.cycle_us.p99)}}}};
      std::printf("%s\n", j.dump(1).c_str());
      return 0;
    }
    std::printf("closed batch: %zu items already queued, %d worker(s), batch %zu, prefetch %s\n", run.size(),
                config.workers, config.batch, config.prefetch ? "on" : "off");
    std::printf("E from %s (model b per tokenizer); spread: %s%s\n", o.fits.c_str(), spread.c_str(),
                o.residuals.empty() ? "" : (", " + std::to_string(config.replications) + " replications").c_str());
    std::printf("CPU: %.4g cores shared with the consumer and publishers (%.3g x the worker's CPU per item); "
                "fitted on %d worker(s): each item's E x %.3f\n",
                config.cpu.cores, config.cpu.other_per_item, config.cpu.fitted_workers, p.cpu_stretch);
    std::printf("replayed run: %zu worker(s), batches of up to %zu\n\n", measured.workers, measured.batch);
    std::printf("%-12s %12s %12s %12s\n", "", "predicted", "measured", "error");
    const auto row = [](const char* name, double pr, double me) {
      std::printf("%-12s %12.4g %12.4g %+11.1f%%\n", name, pr, me, 100 * error(pr, me));
    };
    row("total s", p.total_s, measured.total_s);
    row("cycle p50 us", p.cycle_us.p50, measured.cycle_us.p50);
    row("cycle p95 us", p.cycle_us.p95, measured.cycle_us.p95);
    row("cycle p99 us", p.cycle_us.p99, measured.cycle_us.p99);
    row("cycle mean us", p.cycle_us.mean, measured.cycle_us.mean);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead simulate: %s\n", e.what());
    return 1;
  }
}

}  // namespace overhead::cli
