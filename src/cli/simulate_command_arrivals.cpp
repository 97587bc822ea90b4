#include "cli/simulate_command_arrivals.hpp"

#include <algorithm>
#include <tuple>

#include "backends/open.hpp"
#include "ports/store.hpp"

namespace overhead::cli {

ArrivalReplay replay_arrivals(const std::string& store_url, const std::string& experiment, const std::string& stamp,
                              double speedup, const cost::Workload& fallback) {
  if (experiment.empty()) throw cost::CostError("--experiment is required with --replay-arrivals");
  if (stamp != "auto" && stamp != "received" && stamp != "upfront")
    throw cost::CostError("--arrival-stamp must be auto, received or upfront, got \"" + stamp + "\"");
  if (!(speedup > 0)) throw cost::CostError("--speedup must be > 0");
  if (fallback.output_tokens.empty()) throw cost::CostError("--workload has no requests");
  auto store = backends::open_store(store_url, backends::Access::existing);
  auto records = ports::scan_in_key_order(*store, experiment);
  if (records.empty()) throw cost::CostError("experiment '" + experiment + "' has no records in " + store->url());
  ArrivalReplay a;
  const auto unstamped = std::remove_if(records.begin(), records.end(), [](const ports::Record& r) { return r.received <= 0; });
  a.unstamped = static_cast<std::size_t>(records.end() - unstamped);
  records.erase(unstamped, records.end());
  if (records.empty()) throw cost::CostError("experiment '" + experiment + "': no record has a received stamp");
  // The queue's order: when the workers took them up.
  std::stable_sort(records.begin(), records.end(), [](const ports::Record& x, const ports::Record& y) {
    return std::tie(x.received, x.worker, x.seq) < std::tie(y.received, y.worker, y.seq);
  });
  bool from_run = false;
  for (const auto& r : records) from_run = from_run || r.case_number != 0;
  a.stamp = stamp == "auto" ? (from_run ? "upfront" : "received") : stamp;
  const std::int64_t origin = records.front().received;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    a.times.push_back(a.stamp == "upfront" ? 0.0 : static_cast<double>(r.received - origin) / 1e9 / speedup);
    const bool decoded = r.decode_end > 0;
    a.decoded += decoded ? 1 : 0;
    const double out = decoded ? static_cast<double>(r.output_tokens)
                               : fallback.output_tokens[i % fallback.output_tokens.size()];
    a.requests.push_back({static_cast<double>(r.token_count), out});
  }
  return a;
}

}  // namespace overhead::cli
