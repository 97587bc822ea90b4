#include "report/run_selection.hpp"

#include <algorithm>
#include <map>

namespace overhead::report {

std::vector<ExperimentRuns> runs_by_experiment(const std::vector<ports::Record>& records) {
  std::map<std::string, std::map<std::string, std::size_t>> counts;
  for (const auto& r : records) ++counts[r.experiment][r.run_id];
  std::vector<ExperimentRuns> out;
  for (const auto& [experiment, runs] : counts) {
    ExperimentRuns e{experiment, {}};
    for (const auto& [id, n] : runs) e.runs.push_back({id, n});
    out.push_back(std::move(e));
  }
  return out;
}

std::size_t keep_run(std::vector<ports::Record>& records, std::string_view run_id) {
  return std::erase_if(records, [&](const ports::Record& r) { return r.run_id != run_id; });
}

std::string describe_runs(const ExperimentRuns& e) {
  std::string out = e.experiment + " holds records of " + std::to_string(e.runs.size()) + " run" +
                    (e.runs.size() == 1 ? "" : "s") + ":";
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const auto& r = e.runs[i];
    out += (i ? ", " : " ") + (r.run_id.empty() ? std::string("(no run id)") : r.run_id) + " (" +
           std::to_string(r.records) + ")";
  }
  return out;
}

}  // namespace overhead::report
