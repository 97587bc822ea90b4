// `overhead simulate --replay-arrivals STORE --experiment NAME`: the open simulator's arrivals
// taken from a run's records instead of drawn. Each record is one request, in the order the
// workers took them from the queue (`received`, then worker and seq), with its input tokens
// (`token_count`) and output tokens (`output_tokens` when the record went through the decoder
// stage, i.e. has a `decode_end` stamp; else the --workload's, used in turn).
//
// Records carry no stamp of when they were enqueued, so the arrival time is read from `received`,
// the moment a worker took the item up: the arrival itself when a worker was free, later by the
// queue wait when none was. That is right for records of `overhead serve`, whose requests came
// over time; `overhead run` and `overhead enqueue` put every item on the queue before the workers
// start, so their records arrive all at time 0 ("upfront"), in the same order. `auto` tells them
// apart by the case number `run` and `worker` write (serve's records have none).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cost/cost_model.hpp"
#include "cost/simulator.hpp"

namespace overhead::cli {

struct ArrivalReplay {
  std::vector<double> times;              // seconds from the first, non-decreasing
  std::vector<cost::SimRequest> requests; // same order
  std::string stamp;                      // "received" or "upfront", as applied
  std::size_t unstamped = 0;              // records without `received`, left out
  std::size_t decoded = 0;                // requests whose output tokens are the record's own
};

// `stamp`: auto, received or upfront. `speedup` > 0 divides the gaps. `fallback` gives the
// output tokens of records that were not decoded. Throws cost::CostError (no records, a bad flag).
ArrivalReplay replay_arrivals(const std::string& store_url, const std::string& experiment, const std::string& stamp,
                              double speedup, const cost::Workload& fallback);

}  // namespace overhead::cli
