// Which runs the records of each experiment came from, and the records of one run. A store keeps
// the rows of every run of an experiment (the key has no run in it, so a later run of the same
// ids replaces those rows, and other ids of earlier runs stay); `overhead run` reports on its own
// run and `overhead analyze` on all runs or the one named by --run, and both say when an
// experiment holds the rows of several runs.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ports/record.hpp"

namespace overhead::report {

struct RunCount {
  std::string run_id;  // empty: rows stored before runs had ids
  std::size_t records = 0;
};

struct ExperimentRuns {
  std::string experiment;
  std::vector<RunCount> runs;  // sorted by run id (ids start with their UTC time: oldest first)
};

// Per experiment (sorted by name), the runs its records came from.
[[nodiscard]] std::vector<ExperimentRuns> runs_by_experiment(const std::vector<ports::Record>& records);

// Keeps the records of `run_id` only, in their order; returns how many others it removed.
std::size_t keep_run(std::vector<ports::Record>& records, std::string_view run_id);

// "jmtbench-case2 holds records of 2 runs: 20261203T120000Z-0a1b2c3d (40), (no run id) (5)".
[[nodiscard]] std::string describe_runs(const ExperimentRuns& e);

}  // namespace overhead::report
