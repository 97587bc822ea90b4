// The consumer stage of the open simulator (cost/simulator.hpp): the records, once published, wait
// on the log queue for one of `consumers` consumers, which store them in rounds as pipe/consumer.hpp
// does. A free consumer opens a round when a record is waiting (or at its arrival), goes on
// collecting for `linger_s` or until it holds `batch` records, and writes them in one transaction
// of write_s + write_per_record_s x records; a record is stored when its round's write ends.
// Rounds are taken in log-queue order by whichever consumer is free first.
#pragma once

#include <cstddef>
#include <vector>

#include "cost/simulator.hpp"

namespace overhead::cost {

struct ConsumerRounds {
  // Per record, in the order given.
  std::vector<double> write_start, write_s;
  std::size_t rounds = 0;
  double busy_seconds = 0;  // consumer time spent writing
  double mean_busy = 0;     // consumers writing when a round's write starts, itself included
};

// `log_arrival`: when each record reaches the log queue, non-decreasing.
ConsumerRounds simulate_consumer(const std::vector<double>& log_arrival, const ConsumerSpec& spec);

}  // namespace overhead::cost
