// What `overhead run` reports about its cases, in one unit: each case's result, its stage
// breakdown, the seed-style console table and summary.json. The stage times come from the
// report's own definitions (report::build_item_table), so the console, summary.json and the
// report never disagree on what "publish" or "delete" means.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipe/publisher.hpp"
#include "ports/record.hpp"

namespace overhead::run {

struct RunConfig;

// Means over a case's records, in microseconds, from report::build_item_table: an item's stages
// split its cycle (its start to the next item's start on the same worker), so a stage still
// running when the worker moved on (an asynchronous publish, a batch delete) counts only up to
// that point.
struct StageBreakdown {
  std::size_t records = 0;
  double render_us = 0, encode_us = 0;
  double publish_us = 0;  // over records with publish_acked
  double delete_us = 0;   // over records with input_deleted
  // The cycle of an item whose next item on the worker starts a new input batch ("boundary":
  // it carries the batch turnover unless prefetch hides it) and of the others.
  double gap_boundary_us = 0, gap_other_us = 0;
  // The part of that cycle that is not the item's own render and encode: recording, the publish
  // call, the delete and the wait for the next item. Unlike the cycle it does not depend on the
  // item's length, which in MT-Bench alternates with the position in a batch, so it isolates the
  // batch-boundary cost.
  double between_boundary_us = 0, between_other_us = 0;
  std::size_t boundary_items = 0;  // records flagged batch_boundary
};

struct CaseResult {
  int number = 0;
  std::string steps;
  std::string experiment;
  std::int64_t total_ns = 0;
  std::int64_t worker_cpu_ns = 0;   // CPU time of the worker threads
  std::int64_t process_cpu_ns = 0;  // CPU time of the whole process over the total (all threads)
  std::int64_t enqueue_ns = 0;  // case 5: producer, before the total
  std::int64_t drain_ns = 0;    // cases 3-5: consumer still running after the worker finished
  unsigned workers = 1;
  std::uint64_t items = 0;      // work items handled by the workers
  std::uint64_t ok = 0;         // records confirmed
  std::uint64_t stored = 0;     // records found in the store (or CSV for case 1) afterwards
  std::map<std::string, std::size_t> failures;  // dead letters by kind
  std::uint64_t delete_failures = 0;  // case 5: inputs whose delete failed (they come back)
  std::string dead_letter_file;
  std::string artifact;         // case 1: the CSV's URL/key
  pipe::PublisherStats publisher;
  StageBreakdown stages;
  std::uint64_t failed() const;             // every dead letter of the case
  std::uint64_t bad_input_lines() const;    // of them, source lines refused before they became items
  std::uint64_t failed_items() const { return failed() - bad_input_lines(); }
  double us_per_item() const { return per_item(total_ns); }
  double per_item(std::int64_t ns) const { return items ? static_cast<double>(ns) / 1e3 / static_cast<double>(items) : 0; }
};

StageBreakdown breakdown(std::span<const ports::Record> records);

nlohmann::json to_json(const CaseResult& r);
// The seed-style table and the stage breakdown, as printed by `overhead run`.
std::string format_case_table(const std::vector<CaseResult>& results);
// summary.json: the run's settings (URLs as given, passwords redacted; `store_url` is the opened
// store's url()) and every case.
nlohmann::json run_summary_json(const RunConfig& config, const std::string& store_url,
                                const std::vector<CaseResult>& results);

}  // namespace overhead::run
