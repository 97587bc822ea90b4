#include "cost/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

#include "stats/quantile.hpp"

namespace overhead::cost {
namespace {

Percentiles summarize(const std::vector<double>& v) {
  if (v.empty()) return {};
  const double qs[] = {0.5, 0.95, 0.99};
  const auto q = stats::quantiles(v, qs);
  const double sum = std::accumulate(v.begin(), v.end(), 0.0);
  return {sum / static_cast<double>(v.size()), q[0], q[1], q[2]};
}

// Time-average and maximum of a count that steps +1 at each `ups` time and -1 at each `downs`
// time, over [0, span]. Computed from the events themselves rather than from the waits, so that
// Little's law is a check of the bookkeeping and not an identity.
std::pair<double, std::size_t> time_average_count(std::vector<double> ups, std::vector<double> downs, double span) {
  std::sort(ups.begin(), ups.end());
  std::sort(downs.begin(), downs.end());
  double area = 0, last = 0;
  long long count = 0, peak = 0;
  std::size_t u = 0, d = 0;
  while (u < ups.size() || d < downs.size()) {
    // A departure at the same instant as an arrival goes first, so a zero wait counts zero.
    const bool down = d < downs.size() && (u == ups.size() || downs[d] <= ups[u]);
    const double t = down ? downs[d] : ups[u];
    area += static_cast<double>(count) * (t - last);
    last = t;
    if (down) {
      --count;
      ++d;
    } else {
      ++count;
      ++u;
      peak = std::max(peak, count);
    }
  }
  return {span > 0 ? area / span : 0, static_cast<std::size_t>(peak)};
}

// The count (ups minus downs so far, a departure at an instant counted before an arrival at it)
// at each of the sorted `times`.
std::vector<double> count_at(std::vector<double> ups, std::vector<double> downs, const std::vector<double>& times) {
  std::sort(ups.begin(), ups.end());
  std::sort(downs.begin(), downs.end());
  std::vector<double> out;
  out.reserve(times.size());
  std::size_t u = 0, d = 0;
  for (const double t : times) {
    while (u < ups.size() && ups[u] <= t) ++u;
    while (d < downs.size() && downs[d] <= t) ++d;
    out.push_back(static_cast<double>(u) - static_cast<double>(d));
  }
  return out;
}

}  // namespace

SimResult simulate(const SimConfig& config) {
  if (config.stages.empty()) throw CostError("simulate: no stages");
  if (!(config.arrival_rate > 0)) throw CostError("simulate: the arrival rate must be > 0");
  if (config.requests == 0) throw CostError("simulate: the number of requests must be > 0");
  if (config.workload.empty()) throw CostError("simulate: the workload has no requests");
  for (const auto& s : config.stages)
    if (s.servers < 1 || !s.service_s) throw CostError("simulate: stage " + s.name + " needs >= 1 server and a service time");

  const std::size_t n = config.requests;
  if (config.arrivals == Arrivals::gamma && !(config.arrival_cv > 0))
    throw CostError("simulate: the burst CV must be > 0");
  std::mt19937_64 rng(config.seed);
  std::vector<double> arrival(n);
  double t = 0, gap_sum = 0, gap_sq = 0;
  auto record_gap = [&](std::size_t i, double g) {
    arrival[i] = t += g;
    gap_sum += g;
    gap_sq += g * g;
  };
  if (config.arrivals == Arrivals::poisson) {
    std::exponential_distribution<double> gap(config.arrival_rate);
    for (std::size_t i = 0; i < n; ++i) record_gap(i, gap(rng));
  } else {
    // Gamma with shape k = 1/CV^2 and scale 1/(rate k): mean 1/rate, CV as stated.
    const double k = 1.0 / (config.arrival_cv * config.arrival_cv);
    std::gamma_distribution<double> gap(k, 1.0 / (config.arrival_rate * k));
    for (std::size_t i = 0; i < n; ++i) record_gap(i, gap(rng));
  }

  SimResult r;
  r.requests = n;
  const double gap_mean = gap_sum / static_cast<double>(n);
  r.arrival_rate = 1.0 / gap_mean;
  r.arrival_cv = std::sqrt(std::max(0.0, gap_sq / static_cast<double>(n) - gap_mean * gap_mean)) / gap_mean;
  std::vector<double> at = arrival;  // when each request reaches the current stage
  std::vector<double> total_wait(n, 0.0);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> start(n), wait(n), service(n);
  struct StageEvents {
    std::vector<double> arrivals, starts;
  };
  std::vector<StageEvents> events;

  for (const auto& stage : config.stages) {
    // FIFO with `servers` servers: start times are non-decreasing in arrival order, so the servers
    // busy at a start are exactly the in-service finish times later than it (a min-heap).
    std::priority_queue<double, std::vector<double>, std::greater<>> busy;
    double batch_sum = 0, busy_seconds = 0;
    for (const std::size_t i : order) {
      while (!busy.empty() && busy.top() <= at[i]) busy.pop();
      double s = at[i];
      if (static_cast<int>(busy.size()) >= stage.servers) {
        s = busy.top();
        while (!busy.empty() && busy.top() <= s) busy.pop();
      }
      const double batch = static_cast<double>(busy.size()) + 1;
      const double d = stage.service_s(config.workload[i % config.workload.size()], batch, rng);
      if (!(d >= 0)) throw CostError("simulate: stage " + stage.name + " gave a negative or NaN service time");
      busy.push(s + d);
      start[i] = s;
      wait[i] = s - at[i];
      service[i] = d;
      total_wait[i] += wait[i];
      batch_sum += batch;
      busy_seconds += d;
    }
    StageResult sr;
    sr.name = stage.name;
    sr.servers = stage.servers;
    sr.wait_s = summarize(wait);
    sr.service_s = summarize(service);
    sr.mean_batch = batch_sum / static_cast<double>(n);
    const auto [first, last] = std::minmax_element(at.begin(), at.end());
    const double in_rate = n > 1 && *last > *first ? static_cast<double>(n - 1) / (*last - *first) : config.arrival_rate;
    sr.offered_load = in_rate * sr.service_s.mean / stage.servers;
    sr.saturated = sr.offered_load >= 1.0;
    events.push_back({at, start});
    r.stages.push_back(sr);
    // The next stage sees requests in the order they finish here.
    for (std::size_t i = 0; i < n; ++i) at[i] = start[i] + service[i];
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return at[a] < at[b]; });
    // Utilisation needs the span, known after the last stage; keep busy seconds meanwhile.
    r.stages.back().utilization = busy_seconds;
  }

  r.span_s = *std::max_element(at.begin(), at.end());
  r.throughput_per_s = static_cast<double>(n) / r.span_s;
  for (std::size_t k = 1; k <= config.depth_samples; ++k)
    r.depth_times.push_back(r.span_s * static_cast<double>(k) / static_cast<double>(config.depth_samples));
  for (std::size_t k = 0; k < r.stages.size(); ++k) {
    auto& sr = r.stages[k];
    sr.depth = count_at(events[k].arrivals, events[k].starts, r.depth_times);
    sr.utilization /= sr.servers * r.span_s;
    std::tie(sr.mean_queue_length, sr.max_queue_length) =
        time_average_count(std::move(events[k].arrivals), std::move(events[k].starts), r.span_s);
  }
  std::vector<double> latency(n);
  for (std::size_t i = 0; i < n; ++i) latency[i] = at[i] - arrival[i];
  r.queue_wait_s = summarize(total_wait);
  r.latency_s = summarize(latency);
  r.mean_in_system = time_average_count(arrival, at, r.span_s).first;

  double worst = -1;
  for (const auto& sr : r.stages) {
    if (sr.saturated && r.saturated_stage.empty()) r.saturated_stage = sr.name;
    if (sr.offered_load > worst) {
      worst = sr.offered_load;
      r.bottleneck_stage = sr.name;
    }
  }
  return r;
}

}  // namespace overhead::cost
