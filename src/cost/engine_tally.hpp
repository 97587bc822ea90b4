// What the engine simulation records as its replicas step (engine_sim.hpp): the latency sketches
// (queue wait, GPU wait and service, TTFT, TPOT, end to end), the GPU queue's depth, and the
// completions counted over the middle 80% of the run for the fleet's rates. Bounded memory,
// whatever the number of requests.
#pragma once

#include <cstdint>

#include "cost/engine_source.hpp"
#include "cost/latency_sketch.hpp"
#include "cost/sim_statistics.hpp"

namespace overhead::cost {

class EngineTally {
 public:
  explicit EngineTally(std::uint64_t requests)
      : requests_(requests), window_from_(requests / 10), window_to_(requests - requests / 10) {}

  // A request took a slot at boundary t.
  void admitted(const EngineRequest& it, double t);
  // A sequence emitted its first token at t.
  void first_token(const EngineRequest& it, double t) { ttft.add(t - it.arrival); }
  // A sequence admitted at `admitted`, first token at `first_token`, left at t.
  void completed(const EngineRequest& it, double admitted, double first_token, double t);

  bool done() const { return completed_ >= requests_; }
  std::uint64_t completions() const { return completed_; }
  double last_completion() const { return last_completion_; }
  double all_tokens() const { return all_tokens_; }
  // The middle 80% of the completions: how many, over how long, how many output tokens.
  std::uint64_t window_done() const { return window_done_; }
  double window_s() const { return window_end_ - window_start_; }
  double window_tokens() const { return window_tokens_; }

  LatencySketch gpu_wait, gpu_service, ttft, tpot, latency, queue_wait;
  // Inter-token latency: the gap before each token after a sequence's first, one value per token
  // (where TPOT is one value per request), as benchmarks that report ITL count it.
  LatencySketch itl;
  DepthGrid gpu_depth;
  double gpu_wait_sum = 0;
  std::uint64_t steps = 0;

 private:
  std::uint64_t requests_, window_from_, window_to_;
  std::uint64_t completed_ = 0, window_done_ = 0;
  double window_start_ = 0, window_end_ = 0, window_tokens_ = 0, last_completion_ = 0, all_tokens_ = 0;
};

}  // namespace overhead::cost
