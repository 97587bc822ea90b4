// The event queue of the simulations in cost/: (time, payload), earliest first, ties broken by the
// payload (an index, or the order of asking), so that a run is the same on every standard library.
#pragma once

#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace overhead::cost {

template <class Payload>
using EventQueue = std::priority_queue<std::pair<double, Payload>, std::vector<std::pair<double, Payload>>, std::greater<>>;

}  // namespace overhead::cost
