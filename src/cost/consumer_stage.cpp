#include "cost/consumer_stage.hpp"

#include <algorithm>

namespace overhead::cost {

ConsumerRounds simulate_consumer(const std::vector<double>& log_arrival, const ConsumerSpec& spec) {
  const std::size_t n = log_arrival.size();
  const std::size_t batch = std::max<std::size_t>(1, spec.batch);
  ConsumerRounds r;
  r.write_start.assign(n, 0);
  r.write_s.assign(n, 0);
  // When each consumer is free; a scan finds the first (consumers are few).
  std::vector<double> free(static_cast<std::size_t>(std::max(1, spec.consumers)), 0.0);
  double busy_sum = 0;
  std::size_t head = 0;
  while (head < n) {
    const auto first_free = std::min_element(free.begin(), free.end());
    const double open = std::max(*first_free, log_arrival[head]);
    // The round holds what has arrived by the end of the linger, or the first `batch` records
    // if they are all there sooner (then it writes at once).
    const std::size_t full = std::min(n, head + batch);
    double write = open + spec.linger_s;
    if (log_arrival[full - 1] <= write && full - head == batch) write = std::max(open, log_arrival[full - 1]);
    std::size_t last = head + 1;
    while (last < full && log_arrival[last] <= write) ++last;
    const double seconds = spec.write_s + spec.write_per_record_s * static_cast<double>(last - head);
    for (std::size_t i = head; i < last; ++i) {
      r.write_start[i] = write;
      r.write_s[i] = seconds;
    }
    ++r.rounds;
    r.busy_seconds += seconds;
    busy_sum += 1 + static_cast<double>(std::count_if(free.begin(), free.end(), [&](double f) { return f > write; }));
    *first_free = write + seconds;
    head = last;
  }
  r.mean_busy = r.rounds ? busy_sum / static_cast<double>(r.rounds) : 0;
  return r;
}

}  // namespace overhead::cost
