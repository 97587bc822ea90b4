#include "cost/engine_source.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace overhead::cost {

EngineSource::EngineSource(const EngineSimConfig& c, std::mt19937_64& rng)
    : c_(c), rng_(rng), gaps_(c.arrivals, c.arrival_rate, c.arrival_cv) {
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

void EngineSource::release(std::uint64_t steps, double t) {
  // Every request in flight from the start (an offline benchmark), or clients that start together
  // (a fixed batch): all arrive at 0.
  if (c_.clients_in_step || static_cast<double>(clients_) >= static_cast<double>(c_.requests)) {
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

void EngineSource::completed(double t) {
  if (c_.closed_loop) pending_.push(t);
}

bool EngineSource::peek(double& up) {
  if (!fill()) return false;
  up = ready_.top().first;
  return true;
}

EngineRequest EngineSource::take() {
  EngineRequest it = ready_.top().second;
  ready_.pop();
  return it;
}

// Whether another arrival exists now, and its time.
bool EngineSource::next_arrival(double& t) {
  if (issued_ >= c_.requests) return false;
  if (c_.closed_loop) {
    if (pending_.empty()) return false;
    t = pending_.top();
    return true;
  }
  if (!have_next_) {
    clock_ += gaps_.next(rng_, true);
    next_ = clock_;
    have_next_ = true;
  }
  t = next_;
  return true;
}

void EngineSource::start_next(double arrival) {
  EngineRequest it;
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
    cpu.wait.add(it.cpu_start - arrival);
    cpu.service.add(e);
    cpu.busy += e;
    cpu.wait_sum += it.cpu_start - arrival;
    cpu.depth.add(arrival, +1);
    cpu.depth.add(it.cpu_start, -1);
  } else {
    it.cpu_start = it.up = arrival;
  }
  // A measured engine's exchange of the request (HTTP, tokenizing) before its steps: in its TTFT,
  // holding no slot (Roofline::request_overhead_s; 0 for datasheet GPUs).
  it.up += c_.replica.request_overhead_s;
  ready_.push({it.up, it});
}

// Starts requests until the earliest ready one cannot be overtaken by a later start.
bool EngineSource::fill() {
  constexpr double kNever = std::numeric_limits<double>::infinity();
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

}  // namespace overhead::cost
