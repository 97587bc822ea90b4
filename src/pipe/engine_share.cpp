#include "pipe/engine_share.hpp"

#include <algorithm>

namespace overhead::pipe {

void EngineShare::advance(std::int64_t now_ns) {
  // Stamps from several threads may arrive a little out of order: time never runs back.
  now_ns = std::max(now_ns, last_ns_);
  if (in_flight_ > 0) integral_s_ += static_cast<double>(now_ns - last_ns_) / 1e9 / static_cast<double>(in_flight_);
  last_ns_ = now_ns;
}

double EngineShare::begin(std::int64_t now_ns) {
  std::lock_guard lock(mutex_);
  advance(now_ns);
  ++in_flight_;
  return integral_s_;
}

double EngineShare::end(std::int64_t now_ns, double mark) {
  std::lock_guard lock(mutex_);
  advance(now_ns);
  if (in_flight_ > 0) --in_flight_;
  return std::max(0.0, integral_s_ - mark);
}

}  // namespace overhead::pipe
