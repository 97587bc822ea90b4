// The one exception type of the statistics module: a fit or summary that cannot be computed from
// the data it was given (too few observations, a singular design, non-finite values).
#pragma once

#include <stdexcept>
#include <string>

namespace overhead::stats {

class StatsError : public std::runtime_error {
 public:
  explicit StatsError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace overhead::stats
