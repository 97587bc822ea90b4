// The workers' side of the pipeline in the open simulator (cost/simulator.hpp), for when the input
// queue's batch receive or the log publisher pool is modelled; without either the workers are a
// plain FIFO stage and the simulator does not call this. Owns the event-driven loop over:
//   - the input queue: a worker asks for a batch; the queue answers at max(ask, the first waiting
//     arrival) with every message that has arrived by then, up to `batch`, which is in the
//     worker's hand `receive_s` later. Prefetch off: the worker's own thread deletes the finished
//     batch (`delete_s`) and then asks again. Prefetch on: a second thread asks for the next
//     batch as soon as one is in hand, keeping at most two in hand (the one being processed and
//     one ahead), and does the deletes, so the processing thread pays neither round trip;
//   - E on the worker, one item after the other;
//   - the hand-off of the item's record to the asynchronous publisher pool: `publishers` threads
//     take records first come, first served, each publish lasting `publish_s`; at most
//     `capacity` records wait for a thread, and a worker whose record finds them all taken is
//     blocked until a thread takes the oldest (the backpressure of pipe/publisher.hpp's
//     AsyncPublisher). Blocked time is the worker's, not E's.
// The request itself goes on (to the GPU stage) when E ends; only the worker waits for the pool.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "cost/simulator.hpp"

namespace overhead::cost {

struct WorkerFront {
  // Per request, in arrival order.
  std::vector<double> e_start, e_s;   // E starts, and lasts e_s
  std::vector<double> handed_off;     // the record is in the pool (the worker is free again)
  std::vector<double> publish_start, publish_s;  // a publisher takes it, and publishes for publish_s
  std::size_t receives = 0;           // batches received (with the input queue)
  double io_seconds = 0;              // receive and delete time paid on the workers' own threads
};

// `arrival` sorted. Throws CostError on a negative or NaN E or publish time.
WorkerFront simulate_workers(const std::vector<double>& arrival, const SimConfig& config, std::mt19937_64& rng);

}  // namespace overhead::cost
