#include "cost/engine_sim.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <utility>

#include "cost/latency_sketch.hpp"

namespace overhead::cost {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// A count that steps +1 and -1 at event times, read at instants on a grid: an event at x counts
// at every instant after it. The grid has a fixed number of cells; when an event falls past its
// end, neighbouring cells merge (the cell width doubles), which keeps the values at the remaining
// instants exact. Memory: kCells counters.
class DepthGrid {
 public:
  static constexpr std::size_t kCells = 4096;
  void add(double x, int step) {
    if (!(x >= 0) || !std::isfinite(x)) return;
    while (x >= width_ * static_cast<double>(kCells)) coarsen();
    cells_[static_cast<std::size_t>(x / width_)] += step;
  }
  // The count at the last grid instant at or before t.
  double at(double t) const {
    const auto last = std::min<std::size_t>(kCells, static_cast<std::size_t>(std::max(0.0, t / width_)));
    long long sum = 0;
    for (std::size_t i = 0; i < last; ++i) sum += cells_[i];
    return static_cast<double>(sum);
  }
  std::size_t max() const {
    long long sum = 0, peak = 0;
    for (const auto c : cells_) peak = std::max(peak, sum += c);
    return static_cast<std::size_t>(peak);
  }

 private:
  void coarsen() {
    for (std::size_t i = 0; i < kCells / 2; ++i) cells_[i] = cells_[2 * i] + cells_[2 * i + 1];
    std::fill(cells_.begin() + kCells / 2, cells_.end(), 0);
    width_ *= 2;
  }
  std::vector<long long> cells_ = std::vector<long long>(kCells, 0);
  double width_ = 1e-3;
};

// One request on its way: the times it has passed so far.
struct Item {
  std::uint64_t index = 0;
  double arrival = 0, cpu_start = 0, up = 0;  // up: ready for the GPU (E done)
  double in = 0, out = 1;
};

// The arrivals and the CPU workers, evaluated lazily: next() gives the requests in the order they
// become ready for the GPU, drawing arrivals and starting E only as far as needed.
class Source {
 public:
  Source(const EngineSimConfig& c, std::mt19937_64& rng) : c_(c), rng_(rng) {
    for (int w = 0; w < c.workers; ++w) workers_.push(0.0);
    if (c.closed_loop) {
      // Clients join at the pace the steady state completes requests, counted in engine steps
      // (release()), so that the run starts near its steady state instead of with every prompt
      // at once, or in uneven cohorts that a fixed-length workload would keep forever.
      const auto& q = c.workload.front();
      clients_ = static_cast<std::uint64_t>(std::min<double>(c.concurrency, static_cast<double>(c.requests)));
      const double chunks = std::ceil(std::max(1.0, q.input_tokens) / c.replica.prefill_chunk_tokens);
      slot_steps_ = chunks + std::max(1.0, q.output_tokens) - 1;
      release(0, 0);
    }
  }

  // Closed loop: after `steps` engine steps over the fleet, at time t.
  void release(std::uint64_t steps, double t) {
    // Every request in flight from the start (an offline benchmark): all arrive at 0.
    if (static_cast<double>(clients_) >= static_cast<double>(c_.requests)) {
      for (; joined_ < clients_; ++joined_) pending_.push(t);
      return;
    }
    const double per_replica = static_cast<double>(clients_) / c_.replicas;
    const double due = std::floor(static_cast<double>(steps) * per_replica / slot_steps_) + c_.replicas;
    while (joined_ < clients_ && static_cast<double>(joined_) < due) {
      pending_.push(t);
      ++joined_;
    }
  }

  // A closed loop's client sends its next request when one completes.
  void completed(double t) {
    if (c_.closed_loop) pending_.push(t);
  }

  // The next request's ready time without taking it; false when none is known yet.
  bool peek(double& up) {
    if (!fill()) return false;
    up = ready_.top().first;
    return true;
  }
  const Item& head() const { return ready_.top().second; }
  Item take() {
    Item it = ready_.top().second;
    ready_.pop();
    return it;
  }
  std::uint64_t issued() const { return issued_; }

  LatencySketch cpu_wait, cpu_service;
  double cpu_busy = 0, cpu_wait_sum = 0;
  DepthGrid cpu_depth;

 private:
  // Whether another arrival exists now, and its time.
  bool next_arrival(double& t) {
    if (issued_ >= c_.requests) return false;
    if (c_.closed_loop) {
      if (pending_.empty()) return false;
      t = pending_.top();
      return true;
    }
    if (!have_next_) {
      double gap = 0;
      if (c_.arrivals == Arrivals::gamma) {
        const double k = 1.0 / (c_.arrival_cv * c_.arrival_cv);
        gap = std::gamma_distribution<double>(k, 1.0 / (c_.arrival_rate * k))(rng_);
      } else {
        gap = std::exponential_distribution<double>(c_.arrival_rate)(rng_);
      }
      clock_ += gap;
      next_ = clock_;
      have_next_ = true;
    }
    t = next_;
    return true;
  }

  void start_next(double arrival) {
    Item it;
    it.index = issued_++;
    const auto& q = c_.workload[it.index % c_.workload.size()];
    it.in = q.input_tokens;
    it.out = q.output_tokens;
    it.arrival = arrival;
    if (c_.closed_loop) pending_.pop();
    else have_next_ = false;
    if (c_.workers > 0) {
      const double free = workers_.top();
      workers_.pop();
      it.cpu_start = std::max(arrival, free);
      const double e = c_.cpu(q, 1, rng_);
      if (!(e >= 0) || !std::isfinite(e)) throw CostError("simulate: E gave a negative or non-finite time");
      workers_.push(it.cpu_start + e);
      it.up = it.cpu_start + e;
      cpu_wait.add(it.cpu_start - arrival);
      cpu_service.add(e);
      cpu_busy += e;
      cpu_wait_sum += it.cpu_start - arrival;
      cpu_depth.add(arrival, +1);
      cpu_depth.add(it.cpu_start, -1);
    } else {
      it.cpu_start = it.up = arrival;
    }
    // A measured engine's exchange of the request (HTTP, tokenizing) before its steps: in its TTFT,
    // holding no slot (Roofline::request_overhead_s; 0 for datasheet GPUs).
    it.up += c_.replica.request_overhead_s;
    ready_.push({it.up, it});
  }

  // Starts requests until the earliest ready one cannot be overtaken by a later start.
  bool fill() {
    for (;;) {
      double a = 0;
      const bool more = next_arrival(a);
      const double bound =
          !more ? kNever : (c_.workers > 0 ? std::max(a, workers_.top()) : a) + c_.replica.request_overhead_s;
      if (!ready_.empty() && ready_.top().first <= bound) return true;
      if (!more) return false;  // nothing ready, and no arrival known yet
      start_next(a);
    }
  }

  struct Later {
    bool operator()(const std::pair<double, Item>& a, const std::pair<double, Item>& b) const {
      return a.first != b.first ? a.first > b.first : a.second.index > b.second.index;
    }
  };
  const EngineSimConfig& c_;
  std::mt19937_64& rng_;
  std::priority_queue<double, std::vector<double>, std::greater<>> workers_;
  std::priority_queue<std::pair<double, Item>, std::vector<std::pair<double, Item>>, Later> ready_;
  // Closed loop: the clients' next send times (completions may be found out of time order).
  std::priority_queue<double, std::vector<double>, std::greater<>> pending_;
  std::uint64_t issued_ = 0, clients_ = 0, joined_ = 0;
  double slot_steps_ = 1;
  double clock_ = 0, next_ = 0;
  bool have_next_ = false;
};

// A running sequence.
struct Seq {
  Item item;
  double admitted = 0, first_token = 0;
  double prefill_left = 0, prefilled = 0;
  std::uint64_t finish_step = 0;
};

struct Replica {
  std::vector<Seq> slots;
  std::vector<std::size_t> free_slots;
  std::deque<std::size_t> prefilling;
  std::priority_queue<std::pair<std::uint64_t, std::size_t>, std::vector<std::pair<std::uint64_t, std::size_t>>,
                      std::greater<>> decoding;  // (finish step, slot)
  double decode_context = 0, kv_reserved = 0;
  std::uint64_t steps = 0;
  std::size_t active = 0;
  double busy = 0, batch_time = 0;
};

}  // namespace

SimResult simulate_engine(const EngineSimConfig& c) {
  if (c.replicas < 1) throw CostError("simulate: at least one replica");
  if (c.workload.empty()) throw CostError("simulate: the workload has no requests");
  if (c.requests == 0) throw CostError("simulate: the number of requests must be > 0");
  if (!c.closed_loop && !(c.arrival_rate > 0 && std::isfinite(c.arrival_rate)))
    throw CostError("simulate: the arrival rate must be > 0");
  if (c.closed_loop && !(c.concurrency >= 1)) throw CostError("simulate: the concurrency must be at least 1");
  if (c.arrivals == Arrivals::gamma && !(c.arrival_cv > 0)) throw CostError("simulate: the burst CV must be > 0");
  if (c.workers > 0 && !c.cpu) throw CostError("simulate: the CPU workers need a service time");
  const Roofline& model = c.replica;
  const double kv_tokens = kv_capacity_tokens(model);
  for (const auto& q : c.workload) concurrency_limit(model, q.input_tokens + std::max(1.0, q.output_tokens));
  const auto cap = static_cast<std::size_t>(std::max(1.0, model.max_concurrency));
  const double budget = model.prefill_chunk_tokens;

  std::mt19937_64 rng(c.seed);
  Source source(c, rng);
  std::vector<Replica> replicas(static_cast<std::size_t>(c.replicas));
  for (auto& r : replicas) {
    r.slots.resize(std::min<std::size_t>(cap, 1u << 16));
    for (std::size_t i = r.slots.size(); i-- > 0;) r.free_slots.push_back(i);
  }
  // (time, replica): the next boundary of each busy replica, or the wake-up of an idle one.
  std::priority_queue<std::pair<double, std::size_t>, std::vector<std::pair<double, std::size_t>>, std::greater<>> events;
  std::vector<bool> sleeping(replicas.size(), false);
  std::size_t asleep = 0;
  for (std::size_t k = 0; k < replicas.size(); ++k) events.push({0.0, k});

  LatencySketch gpu_wait, gpu_service, ttft, tpot, latency, queue_wait;
  DepthGrid gpu_depth;
  double gpu_wait_sum = 0;
  std::uint64_t completed = 0, window_done = 0;
  const std::uint64_t n = c.requests;
  const std::uint64_t window_from = n / 10, window_to = n - n / 10;  // the middle 80%
  double window_start = 0, window_end = 0, window_tokens = 0, last_completion = 0, all_tokens = 0;
  std::uint64_t total_steps = 0;

  auto complete = [&](Replica& rep, std::size_t slot, double t) {
    Seq& s = rep.slots[slot];
    latency.add(t - s.item.arrival);
    gpu_service.add(t - s.admitted);
    if (s.item.out > 1) tpot.add((t - s.first_token) / (s.item.out - 1));
    rep.kv_reserved -= s.item.in + std::max(1.0, s.item.out);
    rep.free_slots.push_back(slot);
    --rep.active;
    ++completed;
    all_tokens += s.item.out;
    if (completed == window_from) window_start = t;
    if (completed > window_from && completed <= window_to) {
      window_tokens += s.item.out;
      ++window_done;
      window_end = t;
    }
    last_completion = std::max(last_completion, t);
    source.completed(t);
  };

  auto start_decoding = [&](Replica& rep, std::size_t slot, double t) {
    Seq& s = rep.slots[slot];
    s.first_token = t;
    ttft.add(t - s.item.arrival);
    if (s.item.out <= 1) {
      complete(rep, slot, t);
      return;
    }
    s.finish_step = rep.steps + static_cast<std::uint64_t>(s.item.out - 1);
    rep.decoding.push({s.finish_step, slot});
    rep.decode_context += s.item.in + 1;
  };

  while (completed < n && !events.empty()) {
    const auto [t, k] = events.top();
    events.pop();
    if (t == kNever) break;
    Replica& rep = replicas[k];
    // Admit at the boundary, in FIFO order, while a slot and the KV allow.
    double up = 0;
    while (rep.active < rep.slots.size() && source.peek(up) && up <= t) {
      // The head of the queue waits for KV memory; nothing behind it passes (FIFO).
      const double need = source.head().in + std::max(1.0, source.head().out);
      if (rep.kv_reserved + need > kv_tokens) break;
      const Item it = source.take();
      const std::size_t slot = rep.free_slots.back();
      rep.free_slots.pop_back();
      Seq& s = rep.slots[slot];
      s = Seq{};
      s.item = it;
      s.admitted = t;
      s.prefill_left = it.in;
      rep.kv_reserved += need;
      ++rep.active;
      rep.prefilling.push_back(slot);
      gpu_wait.add(t - it.up);
      queue_wait.add(t - it.up + (it.cpu_start - it.arrival));
      gpu_wait_sum += t - it.up;
      gpu_depth.add(it.up, +1);
      gpu_depth.add(t, -1);
    }
    if (rep.active == 0) {
      // Idle: wake at the next ready request, or when a completion elsewhere sends one.
      if (source.peek(up)) events.push({std::max(up, t), k});
      else if (!sleeping[k]) {
        sleeping[k] = true;
        ++asleep;
      }
      continue;
    }
    // The step: every decode, and the prefill budget over the prefilling sequences in order.
    StepLoad load;
    load.decodes = static_cast<double>(rep.decoding.size());
    load.decode_context = rep.decode_context;
    double left = budget;
    std::size_t finishing_prefills = 0;
    for (std::size_t i = 0; i < rep.prefilling.size(); ++i) {
      Seq& s = rep.slots[rep.prefilling[i]];
      const double chunk = std::min(s.prefill_left, left);
      if (s.prefill_left > 0 && chunk <= 0) break;
      load.prefill_tokens += chunk;
      load.prefill_context += chunk * (s.prefilled + chunk / 2);
      s.prefill_left -= chunk;
      s.prefilled += chunk;
      left -= chunk;
      if (s.prefill_left > 0) break;
      finishing_prefills = i + 1;
    }
    const double step = step_seconds(model, load);
    const double end = t + step;
    rep.busy += step;
    rep.batch_time += static_cast<double>(rep.active) * step;
    ++rep.steps;
    ++total_steps;
    // Every decode produced a token: the context grows; the finished ones leave.
    rep.decode_context += load.decodes;
    while (!rep.decoding.empty() && rep.decoding.top().first <= rep.steps) {
      const std::size_t slot = rep.decoding.top().second;
      rep.decoding.pop();
      rep.decode_context -= rep.slots[slot].item.in + rep.slots[slot].item.out;
      complete(rep, slot, end);
    }
    // The prefills that ended emit their first token.
    for (std::size_t i = 0; i < finishing_prefills; ++i) {
      const std::size_t slot = rep.prefilling.front();
      rep.prefilling.pop_front();
      start_decoding(rep, slot, end);
    }
    events.push({end, k});
    if (c.closed_loop) source.release(total_steps, end);
    // A closed loop's completions sent new requests: wake the idle replicas.
    if (asleep > 0 && source.peek(up))
      for (std::size_t j = 0; j < replicas.size(); ++j)
        if (sleeping[j]) {
          sleeping[j] = false;
          --asleep;
          events.push({std::max(up, t), j});
        }
  }

  SimResult r;
  r.requests = completed;
  r.span_s = last_completion;
  r.throughput_per_s = r.span_s > 0 ? static_cast<double>(completed) / r.span_s : 0;
  const double window_s = window_end - window_start;
  if (window_done > 0 && window_s > 0) {
    r.requests_per_s = static_cast<double>(window_done) / window_s;
    r.output_tokens_per_s = window_tokens / window_s;
  } else {
    r.requests_per_s = r.throughput_per_s;
    double out = 0;
    for (const auto& q : c.workload) out += q.output_tokens;
    r.output_tokens_per_s = r.requests_per_s * out / static_cast<double>(c.workload.size());
  }
  r.total_output_tokens_per_s = r.span_s > 0 ? all_tokens / r.span_s : 0;
  r.arrival_rate = c.closed_loop ? r.throughput_per_s : c.arrival_rate;
  r.arrival_cv = c.arrivals == Arrivals::gamma ? c.arrival_cv : 1;
  r.ttft_s = ttft.percentiles();
  r.tpot_s = tpot.percentiles();
  r.latency_s = latency.percentiles();
  r.queue_wait_s = queue_wait.percentiles();
  r.steps = total_steps;
  for (std::size_t k = 1; k <= c.depth_samples; ++k)
    r.depth_times.push_back(r.span_s * static_cast<double>(k) / static_cast<double>(c.depth_samples));

  double mean_e = 0;
  if (c.workers > 0) {
    StageResult cpu;
    cpu.name = "cpu";
    cpu.servers = c.workers;
    cpu.wait_s = source.cpu_wait.percentiles();
    cpu.service_s = source.cpu_service.percentiles();
    mean_e = cpu.service_s.mean;
    cpu.utilization = r.span_s > 0 ? source.cpu_busy / (c.workers * r.span_s) : 0;
    cpu.offered_load = r.arrival_rate * mean_e / c.workers;
    cpu.saturated = cpu.offered_load >= 1;
    cpu.mean_batch = cpu.utilization * c.workers;
    cpu.mean_queue_length = r.span_s > 0 ? source.cpu_wait_sum / r.span_s : 0;
    cpu.max_queue_length = source.cpu_depth.max();
    for (const double t : r.depth_times) cpu.depth.push_back(source.cpu_depth.at(t));
    r.stages.push_back(cpu);
  }
  StageResult gpu;
  gpu.name = "gpu";
  gpu.servers = c.replicas;
  gpu.wait_s = gpu_wait.percentiles();
  gpu.service_s = gpu_service.percentiles();
  double busy = 0, batch_time = 0;
  for (const auto& rep : replicas) {
    busy += rep.busy;
    batch_time += rep.batch_time;
  }
  gpu.utilization = r.span_s > 0 ? busy / (c.replicas * r.span_s) : 0;
  gpu.mean_batch = busy > 0 ? batch_time / busy : 0;
  r.mean_batch = gpu.mean_batch;
  // Offered load: the arrival rate over the fleet's capacity at the mean request (the same
  // steady state `cost` prices).
  double in = 0, out = 0;
  for (const auto& q : c.workload) {
    in += q.input_tokens;
    out += std::max(1.0, q.output_tokens);
  }
  in /= static_cast<double>(c.workload.size());
  out /= static_cast<double>(c.workload.size());
  const auto full = steady_state(model, concurrency_limit(model, in + out), in, out, true);
  gpu.offered_load = (c.closed_loop ? r.requests_per_s : r.arrival_rate) / (full.requests_per_s * c.replicas);
  gpu.saturated = !c.closed_loop && gpu.offered_load >= 1;
  gpu.mean_queue_length = r.span_s > 0 ? gpu_wait_sum / r.span_s : 0;
  gpu.max_queue_length = gpu_depth.max();
  for (const double t : r.depth_times) gpu.depth.push_back(gpu_depth.at(t));
  r.stages.push_back(gpu);
  r.mean_in_system = r.span_s > 0 ? r.latency_s.mean * static_cast<double>(completed) / r.span_s : 0;
  double worst = -1;
  for (const auto& s : r.stages) {
    if (s.saturated && r.saturated_stage.empty()) r.saturated_stage = s.name;
    if (s.offered_load > worst) {
      worst = s.offered_load;
      r.bottleneck_stage = s.name;
    }
  }
  return r;
}

}  // namespace overhead::cost
