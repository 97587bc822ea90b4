#include "cost/closed_batch.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

#include "cost/event_queue.hpp"
#include "cost/sim_statistics.hpp"

namespace overhead::cost {
namespace {

struct Worker {
  double main_free = 0;  // when the processing thread is done with what it has
  double receive_free = 0;  // when the receiving thread is done with its last receive
  double settle_free = 0;   // when the settling thread is done with its last delete
  double end = 0;        // its last stamp
  std::vector<std::size_t> items;  // in processing order
  std::vector<double> starts;
};

}  // namespace

double CpuShare::stretch(int workers) const {
  if (!(cores > 0)) return 1;
  const double demand = static_cast<double>(workers) * (1 + other_per_item);
  return std::max(1.0, demand / cores);
}

double EmpiricalSpread::draw(double fitted_us, std::mt19937_64& rng) const {
  if (ratios.empty()) return 1;
  const std::size_t bin = std::min<std::size_t>(
      static_cast<std::size_t>(std::lower_bound(upper.begin(), upper.end(), fitted_us) - upper.begin()), ratios.size() - 1);
  const auto& pool = ratios[bin];
  return pool[std::uniform_int_distribution<std::size_t>(0, pool.size() - 1)(rng)];
}

EmpiricalSpread make_spread(std::vector<std::pair<double, double>> fitted_measured, std::size_t bins,
                            std::size_t min_per_bin) {
  std::erase_if(fitted_measured, [](const auto& p) { return !(p.first > 0) || !std::isfinite(p.first) || !std::isfinite(p.second); });
  EmpiricalSpread s;
  if (fitted_measured.empty()) return s;
  std::sort(fitted_measured.begin(), fitted_measured.end());
  const std::size_t n = fitted_measured.size();
  bins = std::clamp<std::size_t>(n / std::max<std::size_t>(1, min_per_bin), 1, std::max<std::size_t>(1, bins));
  const std::size_t target = (n + bins - 1) / bins;
  std::size_t lo = 0;
  while (lo < n) {
    // A bin closes once it holds `target` items, but never between two equal fitted values (they
    // must draw from the same pool); a short remainder joins the last bin.
    std::size_t hi = std::min(n, lo + target);
    while (hi < n && fitted_measured[hi].first == fitted_measured[hi - 1].first) ++hi;
    if (n - hi < target / 2) hi = n;
    std::vector<double> pool;
    double sum = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      pool.push_back(fitted_measured[i].second / fitted_measured[i].first);
      sum += pool.back();
    }
    if (sum > 0)
      for (double& r : pool) r *= static_cast<double>(pool.size()) / sum;
    s.upper.push_back(fitted_measured[hi - 1].first);
    s.ratios.push_back(std::move(pool));
    lo = hi;
  }
  return s;
}

namespace {

// One replication with its own generator.
ClosedBatchResult simulate_once(const std::vector<ClosedBatchItem>& items, const std::vector<EBatch>& fits,
                                const ClosedBatchConfig& config, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  // Every busy thread of the process runs this much slower than in the fitted run: the items'
  // E and the receive and delete round trips alike (on one machine they are CPU too).
  const double stretch = config.cpu.relative(config.workers);
  const EmpiricalSpread& plain = config.spread;
  const EmpiricalSpread& turnover = config.turnover_spread.empty() ? config.spread : config.turnover_spread;
  const std::size_t in_flight = config.max_in_flight ? std::max(config.max_in_flight, config.batch) : 4 * config.batch;
  const std::size_t ahead = config.prefetch ? std::max<std::size_t>(1, in_flight / config.batch) : 1;

  std::vector<Worker> workers(static_cast<std::size_t>(config.workers));
  // Receive requests: (time the batch is in hand, order of asking, worker). The queue hands the
  // next batch to the earliest request.
  EventQueue<std::pair<std::uint64_t, std::size_t>> requests;
  std::uint64_t asked = 0;
  auto round_trip = [&](std::size_t item) { return stretch * std::max(0.0, fits[items[item].fit].turnover_us); };
  for (std::size_t w = 0; w < workers.size(); ++w) {
    // The first receive is in hand at 0 (the measured clock starts at the first item's start);
    // a prefetching worker asks for `ahead` batches back to back.
    for (std::size_t k = 0; k < ahead; ++k) {
      const double at = config.prefetch ? static_cast<double>(k) * round_trip(0) / 2 : 0;
      requests.push({at, {asked++, w}});
      workers[w].receive_free = at;
    }
  }

  ClosedBatchResult r;
  std::size_t head = 0;
  while (!requests.empty()) {
    const auto [at, asking] = requests.top();
    const std::size_t w = asking.second;
    requests.pop();
    Worker& wk = workers[w];
    if (head == items.size()) {
      // The empty receive: the worker settles what it has and stops.
      if (!wk.items.empty()) wk.end = std::max(wk.end, config.prefetch ? wk.main_free + round_trip(wk.items.back()) / 2 : at);
      continue;
    }
    const std::size_t first = head, last = std::min(items.size(), head + config.batch);
    head = last;
    ++r.batches;
    double t = std::max(wk.main_free, at);
    for (std::size_t i = first; i < last; ++i) {
      const bool pays_turnover = !config.prefetch && i + 1 == last;
      const EBatch& e = fits[items[i].fit];
      const double fitted = std::max(0.0, e.at(items[i].tokens, pays_turnover));
      const double cycle = stretch * fitted * (pays_turnover ? turnover : plain).draw(fitted, rng);
      wk.items.push_back(i);
      wk.starts.push_back(t);
      t += cycle;
    }
    wk.main_free = t;
    wk.end = t;
    if (config.prefetch) {
      // Settled when its last item is published: the settling thread deletes it, which frees its
      // place under the in-flight bound; the receiving thread then asks for the next batch. The
      // two threads work on different batches at once (pipe/worker.hpp).
      const double half = round_trip(first) / 2;
      const double settled = std::max(t, wk.settle_free) + half;
      wk.settle_free = settled;
      const double next = std::max(settled, wk.receive_free) + half;
      wk.receive_free = next;
      requests.push({next, {asked++, w}});
    } else {
      requests.push({t, {asked++, w}});
    }
  }

  r.cycles_us.assign(items.size(), 0);
  double end = 0;
  for (const auto& wk : workers) {
    r.items_per_worker.push_back(wk.items.size());
    for (std::size_t k = 0; k < wk.items.size(); ++k) {
      const double next = k + 1 < wk.items.size() ? wk.starts[k + 1] : wk.end;
      r.cycles_us[wk.items[k]] = next - wk.starts[k];
    }
    end = std::max(end, wk.end);
  }
  r.total_s = end / 1e6;
  return r;
}

}  // namespace

ClosedBatchResult simulate_closed_batch(const std::vector<ClosedBatchItem>& items, const std::vector<EBatch>& fits,
                                        const ClosedBatchConfig& config) {
  if (items.empty()) throw CostError("closed batch: no items");
  if (config.workers < 1) throw CostError("closed batch: workers must be >= 1");
  if (config.batch < 1) throw CostError("closed batch: batch must be >= 1");
  for (const auto& it : items)
    if (it.fit >= fits.size()) throw CostError("closed batch: an item names a fit that was not given");
  if (!std::isfinite(config.cpu.cores) || config.cpu.cores < 0)
    throw CostError("closed batch: cores must be a finite number >= 0");
  if (!std::isfinite(config.cpu.other_per_item) || config.cpu.other_per_item < 0)
    throw CostError("closed batch: the other threads' CPU per item must be a finite number >= 0");
  if (config.cpu.fitted_workers < 1) throw CostError("closed batch: the fitted run's workers must be >= 1");
  const bool random = !config.spread.empty() || !config.turnover_spread.empty();
  const std::size_t runs = random ? std::max<std::size_t>(1, config.replications) : 1;
  ClosedBatchResult r = simulate_once(items, fits, config, config.seed);
  std::vector<double> all = r.cycles_us;
  double total = r.total_s;
  for (std::size_t k = 1; k < runs; ++k) {
    const ClosedBatchResult more = simulate_once(items, fits, config, config.seed + k);
    all.insert(all.end(), more.cycles_us.begin(), more.cycles_us.end());
    total += more.total_s;
  }
  r.total_s = total / static_cast<double>(runs);
  r.cpu_stretch = config.cpu.relative(config.workers);
  r.cycle_us = summarize(all);
  return r;
}

}  // namespace overhead::cost
