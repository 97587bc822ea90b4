#include "cost/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <utility>

#include "cost/arrival_process.hpp"
#include "cost/consumer_stage.hpp"
#include "cost/sim_statistics.hpp"
#include "cost/worker_front.hpp"

namespace overhead::cost {
namespace {

// A stage's events, kept until the span is known: its utilization, offered load and queue depth
// are per second of the whole run.
struct StageEvents {
  std::vector<double> arrivals, starts;
  double busy_seconds = 0, blocked_seconds = 0, io_seconds = 0, mean_service = 0;
  double in_rate = 0;  // NaN when all its arrivals came at one instant: then the run's rate
};

// Refuses a config that cannot run, naming what is wrong.
void check_config(const SimConfig& config) {
  if (config.stages.empty()) throw CostError("simulate: no stages");
  const bool replay = config.arrivals == Arrivals::replay;
  if (!replay && !(config.arrival_rate > 0)) throw CostError("simulate: the arrival rate must be > 0");
  if (!replay && config.requests == 0) throw CostError("simulate: the number of requests must be > 0");
  if (replay && config.arrival_times.empty()) throw CostError("simulate: no arrival times to replay");
  if (config.workload.empty()) throw CostError("simulate: the workload has no requests");
  for (const auto& s : config.stages)
    if (s.servers < 1 || !s.service_s) throw CostError("simulate: stage " + s.name + " needs >= 1 server and a service time");
  if (config.arrivals == Arrivals::gamma && !(config.arrival_cv > 0))
    throw CostError("simulate: the burst CV must be > 0");
  const bool publishing = config.publish.publishers > 0;
  const bool consuming = config.consumer.consumers > 0;
  if (publishing && !config.publish.publish_s) throw CostError("simulate: the publish stage needs a publish time");
  if (consuming && !publishing) throw CostError("simulate: the consumer stage needs the publish stage (publishers >= 1)");
  if (config.input.batch < 1 || config.input.receive_s < 0 || config.input.delete_s < 0)
    throw CostError("simulate: the input queue needs a batch >= 1 and round trips >= 0");
  if (consuming && (config.consumer.batch < 1 || config.consumer.linger_s < 0 || config.consumer.write_s < 0 ||
                    config.consumer.write_per_record_s < 0))
    throw CostError("simulate: the consumer needs a batch >= 1 and times >= 0");
}

// The requests on their way through the chain: per request, when it reaches the current stage and
// what it waited in all; per stage, when each started, waited and was served there.
struct Chain {
  std::vector<double> at, total_wait;
  std::vector<std::size_t> order;  // the current stage's arrival order
  std::vector<double> start, wait, service;
  explicit Chain(const std::vector<double>& arrival)
      : at(arrival), total_wait(arrival.size(), 0.0), order(arrival.size()), start(arrival.size()),
        wait(arrival.size()), service(arrival.size()) {
    std::iota(order.begin(), order.end(), 0);
  }
  std::size_t size() const { return at.size(); }
};

// The first stage with the input queue and the publish hand-off (worker_front.hpp): an
// event-driven loop over the workers.
void workers_with_front(const SimConfig& config, const WorkerFront& wf, Chain& c, StageResult& sr, StageEvents& ev) {
  const std::size_t n = c.size();
  std::vector<double> blocked(n);
  for (std::size_t i = 0; i < n; ++i) {
    c.start[i] = wf.e_start[i];
    c.service[i] = wf.e_s[i];
    c.wait[i] = c.start[i] - c.at[i];
    c.total_wait[i] += c.wait[i];
    ev.busy_seconds += c.service[i];
    blocked[i] = wf.handed_off[i] - (c.start[i] + c.service[i]);
    ev.blocked_seconds += blocked[i];
  }
  sr.mean_batch = mean_concurrency(c.start, c.service);
  if (config.publish.publishers > 0) sr.blocked_s = summarize(blocked);
  if (config.input.on()) {
    ev.io_seconds = wf.io_seconds;
    sr.rounds = wf.receives;
    sr.mean_round_size = static_cast<double>(n) / static_cast<double>(wf.receives);
  }
}

// FIFO with `servers` servers: start times are non-decreasing in arrival order, so the servers
// busy at a start are exactly the in-service finish times later than it (a min-heap). A request
// never starts before the one ahead of it: with requests arriving at one instant (a replayed
// batch) two servers freed together would otherwise let a later one jump in.
void fifo_stage(const SimConfig& config, const StageSpec& stage, std::mt19937_64& rng, Chain& c, StageResult& sr,
                StageEvents& ev) {
  std::priority_queue<double, std::vector<double>, std::greater<>> busy;
  double batch_sum = 0, last_start = 0;
  for (const std::size_t i : c.order) {
    double s = std::max(c.at[i], last_start);
    while (!busy.empty() && busy.top() <= s) busy.pop();
    if (static_cast<int>(busy.size()) >= stage.servers) {
      s = busy.top();
      while (!busy.empty() && busy.top() <= s) busy.pop();
    }
    const double batch = static_cast<double>(busy.size()) + 1;
    const double d = stage.service_s(config.workload[i % config.workload.size()], batch, rng);
    if (!(d >= 0)) throw CostError("simulate: stage " + stage.name + " gave a negative or NaN service time");
    busy.push(s + d);
    last_start = s;
    c.start[i] = s;
    c.wait[i] = s - c.at[i];
    c.service[i] = d;
    c.total_wait[i] += c.wait[i];
    batch_sum += batch;
    ev.busy_seconds += d;
  }
  sr.mean_batch = batch_sum / static_cast<double>(c.size());
}

// Every stage of the chain in turn; each sees the requests in the order they left the one before.
void run_chain(const SimConfig& config, const WorkerFront& wf, bool front, std::mt19937_64& rng, Chain& c, SimResult& r,
               std::vector<StageEvents>& events) {
  for (std::size_t k = 0; k < config.stages.size(); ++k) {
    const auto& stage = config.stages[k];
    StageResult sr;
    sr.name = stage.name;
    sr.servers = stage.servers;
    StageEvents ev;
    if (k == 0 && front)
      workers_with_front(config, wf, c, sr, ev);
    else
      fifo_stage(config, stage, rng, c, sr, ev);
    sr.wait_s = summarize(c.wait);
    sr.service_s = summarize(c.service);
    ev.mean_service = sr.service_s.mean;
    ev.in_rate = rate_of_spread(c.at);
    ev.arrivals = c.at;
    ev.starts = c.start;
    events.push_back(std::move(ev));
    r.stages.push_back(sr);
    for (std::size_t i = 0; i < c.size(); ++i) c.at[i] = c.start[i] + c.service[i];
    std::stable_sort(c.order.begin(), c.order.end(), [&](std::size_t a, std::size_t b) { return c.at[a] < c.at[b]; });
  }
}

// The record's branch, first part: the publisher pool after E. Returns when each record was published.
std::vector<double> publish_branch(const SimConfig& config, const WorkerFront& wf, SimResult& r,
                                   std::vector<StageEvents>& events) {
  const std::size_t n = wf.e_start.size();
  StageResult sr;
  sr.name = "publish";
  sr.servers = config.publish.publishers;
  sr.request_path = false;
  StageEvents ev;
  std::vector<double> pub_wait(n), published(n), offered(n);
  for (std::size_t i = 0; i < n; ++i) {
    pub_wait[i] = wf.publish_start[i] - wf.handed_off[i];
    published[i] = wf.publish_start[i] + wf.publish_s[i];
    offered[i] = wf.e_start[i] + wf.e_s[i];
    ev.busy_seconds += wf.publish_s[i];
  }
  sr.wait_s = summarize(pub_wait);
  sr.service_s = summarize(wf.publish_s);
  sr.mean_batch = mean_concurrency(wf.publish_start, wf.publish_s);
  ev.mean_service = sr.service_s.mean;
  // The load offered to the pool is the records as E ends, not as the pool lets them in (a
  // full pool throttles its own arrivals to its capacity).
  ev.in_rate = rate_of_spread(offered);
  ev.arrivals = wf.handed_off;
  ev.starts = wf.publish_start;
  r.span_s = std::max(r.span_s, *std::max_element(published.begin(), published.end()));
  events.push_back(std::move(ev));
  r.stages.push_back(sr);
  return published;
}

// The record's branch, second part: the consumer storing the records in the order they were
// published. Returns when each record was stored.
std::vector<double> consumer_branch(const SimConfig& config, const std::vector<double>& published, SimResult& r,
                                    std::vector<StageEvents>& events) {
  const std::size_t n = published.size();
  std::vector<std::size_t> by_time(n);
  std::iota(by_time.begin(), by_time.end(), 0);
  std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) { return published[a] < published[b]; });
  std::vector<double> log_arrival(n);
  for (std::size_t k = 0; k < n; ++k) log_arrival[k] = published[by_time[k]];
  const ConsumerRounds cr = simulate_consumer(log_arrival, config.consumer);
  StageResult cs;
  cs.name = "consumer";
  cs.servers = config.consumer.consumers;
  cs.request_path = false;
  cs.rounds = cr.rounds;
  cs.mean_round_size = static_cast<double>(n) / static_cast<double>(cr.rounds);
  cs.mean_batch = cr.mean_busy;
  StageEvents cev;
  std::vector<double> c_wait(n), stored(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    c_wait[k] = cr.write_start[k] - log_arrival[k];
    stored[by_time[k]] = cr.write_start[k] + cr.write_s[k];
  }
  cs.wait_s = summarize(c_wait);
  cs.service_s = summarize(cr.write_s);
  cev.busy_seconds = cr.busy_seconds;
  cev.mean_service = cr.busy_seconds / static_cast<double>(n);  // a record's share of its round
  cev.in_rate = rate_of_spread(log_arrival);
  cev.starts = cr.write_start;
  cev.arrivals = std::move(log_arrival);
  r.span_s = std::max(r.span_s, *std::max_element(stored.begin(), stored.end()));
  events.push_back(std::move(cev));
  r.stages.push_back(cs);
  return stored;
}

// Per stage, once the span is known: offered load, utilization, queue depth over time and length.
void stage_figures(std::size_t depth_samples, std::vector<StageEvents>& events, SimResult& r) {
  r.throughput_per_s = static_cast<double>(r.requests) / r.span_s;
  r.depth_times = depth_instants(r.span_s, depth_samples);
  for (std::size_t k = 0; k < r.stages.size(); ++k) {
    auto& sr = r.stages[k];
    auto& ev = events[k];
    // All of a stage's arrivals at one instant (a replayed run enqueued up front): the rate into it
    // is the run's own.
    const double in_rate = std::isnan(ev.in_rate) ? r.throughput_per_s : ev.in_rate;
    sr.offered_load = in_rate * ev.mean_service / sr.servers;
    sr.saturated = sr.offered_load >= 1.0;
    sr.depth = count_at(ev.arrivals, ev.starts, r.depth_times);
    sr.utilization = ev.busy_seconds / (sr.servers * r.span_s);
    sr.blocked_share = ev.blocked_seconds / (sr.servers * r.span_s);
    sr.io_share = ev.io_seconds / (sr.servers * r.span_s);
    std::tie(sr.mean_queue_length, sr.max_queue_length) =
        time_average_count(std::move(ev.arrivals), std::move(ev.starts), r.span_s);
  }
}

// Per request: its queue waits, its latency to leaving the chain and to its record stored (when
// the consumer ran), and the time-average requests in the system.
void request_figures(const std::vector<double>& arrival, const Chain& c, const std::vector<double>& stored, SimResult& r) {
  const std::size_t n = arrival.size();
  std::vector<double> latency(n);
  for (std::size_t i = 0; i < n; ++i) latency[i] = c.at[i] - arrival[i];
  r.queue_wait_s = summarize(c.total_wait);
  r.latency_s = summarize(latency);
  if (!stored.empty()) {
    for (std::size_t i = 0; i < n; ++i) latency[i] = stored[i] - arrival[i];
    r.stored_latency_s = summarize(latency);
  }
  r.mean_in_system = time_average_count(arrival, c.at, r.span_s).first;
}

}  // namespace

SimResult simulate(const SimConfig& config) {
  check_config(config);
  const bool publishing = config.publish.publishers > 0;
  const bool front = config.input.on() || publishing;

  std::mt19937_64 rng(config.seed);
  const DrawnArrivals drawn =
      draw_arrivals(config.arrivals, config.arrival_rate, config.arrival_cv, config.requests, config.arrival_times, rng);
  const std::vector<double>& arrival = drawn.times;

  SimResult r;
  r.requests = arrival.size();
  r.arrival_rate = drawn.rate;
  r.arrival_cv = drawn.cv;
  Chain chain(arrival);
  // The worker front draws from the generator before the other stages do, as it always has.
  const WorkerFront wf = front ? simulate_workers(chain.at, config, rng) : WorkerFront{};
  std::vector<StageEvents> events;
  run_chain(config, wf, front, rng, chain, r, events);
  r.span_s = *std::max_element(chain.at.begin(), chain.at.end());

  std::vector<double> stored;
  if (publishing) {
    const auto published = publish_branch(config, wf, r, events);
    if (config.consumer.consumers > 0) stored = consumer_branch(config, published, r, events);
  }
  stage_figures(config.depth_samples, events, r);
  request_figures(arrival, chain, stored, r);
  name_bottleneck(r);
  return r;
}

}  // namespace overhead::cost
