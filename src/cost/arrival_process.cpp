#include "cost/arrival_process.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace overhead::cost {
namespace {

double gamma_shape(double cv) { return 1.0 / (cv * cv); }

}  // namespace

ArrivalGaps::ArrivalGaps(Arrivals kind, double rate, double cv)
    : gamma_(kind == Arrivals::gamma), exponential_(gamma_ ? 1.0 : rate),
      gamma_gap_(gamma_ ? gamma_shape(cv) : 1.0, gamma_ ? 1.0 / (rate * gamma_shape(cv)) : 1.0) {}

double ArrivalGaps::next(std::mt19937_64& rng, bool independent) {
  if (!gamma_) return exponential_(rng);
  if (independent) gamma_gap_.reset();
  return gamma_gap_(rng);
}

DrawnArrivals draw_arrivals(Arrivals kind, double rate, double cv, std::size_t requests,
                            const std::vector<double>& replayed, std::mt19937_64& rng) {
  DrawnArrivals a;
  double gap_sum = 0, gap_sq = 0, gaps = 0;
  auto add_gap = [&](double g) {
    gap_sum += g;
    gap_sq += g * g;
    gaps += 1;
  };
  if (kind == Arrivals::replay) {
    a.times = replayed;
    for (std::size_t i = 0; i < a.times.size(); ++i) {
      if (!(a.times[i] >= 0) || !std::isfinite(a.times[i]))
        throw CostError("simulate: replayed arrival " + std::to_string(i) + " is negative or not a number");
      if (i > 0) {
        if (a.times[i] < a.times[i - 1]) throw CostError("simulate: replayed arrivals must be in time order");
        add_gap(a.times[i] - a.times[i - 1]);
      }
    }
  } else {
    a.times.resize(requests);
    ArrivalGaps gap(kind, rate, cv);
    double t = 0;
    for (std::size_t i = 0; i < requests; ++i) {
      const double g = gap.next(rng);
      a.times[i] = t += g;
      add_gap(g);
    }
  }
  if (gaps > 0 && gap_sum > 0) {
    const double mean = gap_sum / gaps;
    a.rate = 1.0 / mean;
    a.cv = std::sqrt(std::max(0.0, gap_sq / gaps - mean * mean)) / mean;
  }
  return a;
}

}  // namespace overhead::cost
