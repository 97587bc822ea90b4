// How requests arrive in a simulation: gaps drawn at a mean rate (Poisson, or gamma bursts with a
// stated CV) from the run's generator, or times replayed from a measured run. The per-request
// chain draws them all up front (draw_arrivals); the engine simulation draws one gap at a time as
// it needs the next request (ArrivalGaps).
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "cost/sim_result.hpp"

namespace overhead::cost {

// Gaps between arrivals at a mean rate: exponential (Poisson), or gamma with shape 1/CV^2 and
// scale 1/(rate x shape), so mean 1/rate and the CV as stated.
class ArrivalGaps {
 public:
  ArrivalGaps(Arrivals kind, double rate, double cv);
  // The next gap. The gamma draws its normals in pairs and keeps the second for its next draw;
  // `independent` drops it first, so the gap is drawn as by a fresh distribution (the engine
  // simulation's gaps, interleaved with E's draws on one generator, are drawn that way).
  double next(std::mt19937_64& rng, bool independent = false);

 private:
  bool gamma_;
  std::exponential_distribution<double> exponential_;
  std::gamma_distribution<double> gamma_gap_;
};

// The arrival times of a run and the rate and CV measured on their gaps (0 when all arrive at one
// instant).
struct DrawnArrivals {
  std::vector<double> times;
  double rate = 0, cv = 0;
};

// `requests` arrivals drawn at `rate` (poisson, gamma), or `replayed` as given (replay). Throws
// CostError on a replayed time that is negative, not a number, or out of time order.
DrawnArrivals draw_arrivals(Arrivals kind, double rate, double cv, std::size_t requests,
                            const std::vector<double>& replayed, std::mt19937_64& rng);

}  // namespace overhead::cost
