#include "cost/engine_tally.hpp"

#include <algorithm>

namespace overhead::cost {

void EngineTally::admitted(const EngineRequest& it, double t) {
  gpu_wait.add(t - it.up);
  queue_wait.add(t - it.up + (it.cpu_start - it.arrival));
  gpu_wait_sum += t - it.up;
  gpu_depth.add(it.up, +1);
  gpu_depth.add(t, -1);
}

void EngineTally::completed(const EngineRequest& it, double admitted, double first_token, double t) {
  latency.add(t - it.arrival);
  gpu_service.add(t - admitted);
  if (it.out > 1) tpot.add((t - first_token) / (it.out - 1));
  ++completed_;
  all_tokens_ += it.out;
  if (completed_ == window_from_) window_start_ = t;
  if (completed_ > window_from_ && completed_ <= window_to_) {
    window_tokens_ += it.out;
    ++window_done_;
    window_end_ = t;
  }
  last_completion_ = std::max(last_completion_, t);
}

}  // namespace overhead::cost
