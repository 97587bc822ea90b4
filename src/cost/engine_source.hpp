// The front of the engine simulation (engine_sim.hpp): the arrivals (drawn at a rate, or a closed
// loop of clients) and the CPU workers' E in FIFO order, evaluated lazily: next ready request,
// in the order the requests become ready for the GPU, drawing arrivals and starting E only as far
// as needed, so memory does not grow with the run.
#pragma once

#include <cstdint>
#include <queue>
#include <random>
#include <utility>
#include <vector>

#include "cost/arrival_process.hpp"
#include "cost/engine_sim.hpp"
#include "cost/latency_sketch.hpp"
#include "cost/sim_statistics.hpp"

namespace overhead::cost {

// One request on its way: the times it has passed so far.
struct EngineRequest {
  std::uint64_t index = 0;
  double arrival = 0, cpu_start = 0, up = 0;  // up: ready for the GPU (E done)
  double in = 0, out = 1;
};

// What the CPU workers did, for their stage's figures.
struct CpuTally {
  LatencySketch wait, service;
  double busy = 0, wait_sum = 0;
  DepthGrid depth;
};

class EngineSource {
 public:
  EngineSource(const EngineSimConfig& c, std::mt19937_64& rng);

  // Closed loop: after `steps` engine steps over the fleet, at time t.
  void release(std::uint64_t steps, double t);
  // A closed loop's client sends its next request when one completes.
  void completed(double t);

  // The next request's ready time without taking it; false when none is known yet.
  bool peek(double& up);
  const EngineRequest& head() const { return ready_.top().second; }
  EngineRequest take();

  CpuTally cpu;

 private:
  bool next_arrival(double& t);
  void start_next(double arrival);
  bool fill();

  struct Later {
    bool operator()(const std::pair<double, EngineRequest>& a, const std::pair<double, EngineRequest>& b) const {
      return a.first != b.first ? a.first > b.first : a.second.index > b.second.index;
    }
  };
  const EngineSimConfig& c_;
  std::mt19937_64& rng_;
  ArrivalGaps gaps_;
  std::priority_queue<double, std::vector<double>, std::greater<>> workers_;
  std::priority_queue<std::pair<double, EngineRequest>, std::vector<std::pair<double, EngineRequest>>, Later> ready_;
  // Closed loop: the clients' next send times (completions may be found out of time order).
  std::priority_queue<double, std::vector<double>, std::greater<>> pending_;
  std::uint64_t issued_ = 0, clients_ = 0, joined_ = 0;
  double slot_steps_ = 1;
  double clock_ = 0, next_ = 0;
  bool have_next_ = false;
};

}  // namespace overhead::cost
