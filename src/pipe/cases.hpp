// The seed's five cases as presets over the same parts:
//   1  local JSONL -> tokenize -> records kept in memory -> one CSV to the object store at the end
//   2  local JSONL -> tokenize -> synchronous store write per item
//   3  local JSONL -> tokenize -> synchronous push to the log queue; the consumer writes the store
//   4  as 3, with asynchronous parallel pushes (pool of --publishers threads)
//   5  input queue (filled by the producer first) -> tokenize -> asynchronous pushes -> consumer -> store
//
// Total time of a case: from reading the input (the JSONL for 1-4, the first receive for 5) to
// the worker's last record confirmed and last input deleted. The producer's enqueue (case 5)
// and the consumer's drain after the worker finished (3-5) are reported beside it. Every case
// writes its records under its own experiment, "<experiment>-case<N>", so cases never
// overwrite each other in the store; case 1's records are copied into the store after its
// timing, so the analysis sees all five.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipe/object_store.hpp"
#include "pipe/processor.hpp"
#include "pipe/publisher.hpp"
#include "pipe/queue.hpp"
#include "pipe/record.hpp"
#include "pipe/store.hpp"

namespace overhead::pipe {

struct RunConfig {
  std::string data;                       // the seed's JSONL (.gz ok)
  std::vector<std::string> tokenizers;
  std::string experiment = "jmtbench";
  std::string queue_url = "mem:in";
  std::string log_queue_url = "mem:log";
  std::string store_url;                  // empty = sqlite:<out>/records.db
  std::string out_dir = "out";
  std::size_t batch = 10;
  unsigned publishers = 10;
  bool prefetch = true;
  std::size_t limit = 0;                  // first N records (0 = all)
  std::int64_t max_prompt_bytes = 0;
  std::size_t max_in_flight = 0;
  unsigned workers = 1;                   // worker threads sharing the source (the seed had one)
  bool progress = true;
};

// Means over a case's records, in microseconds.
struct StageBreakdown {
  std::size_t records = 0;
  double render_us = 0, encode_us = 0, publish_us = 0, delete_us = 0;
  // Time from the previous item's start to this one's on the same worker: for a batch-boundary
  // item it holds the batch turnover (receive, delete) unless prefetch hides it.
  double gap_boundary_us = 0, gap_other_us = 0;
  // Time between the previous item's encode end and this item's render start: what is not the
  // item's own work (publish call, batch turnover). Unlike the gap it does not depend on the
  // previous item's length, which in MT-Bench alternates with the position in a batch (turn-1
  // and turn-2 records alternate), so it isolates the batch-boundary cost.
  double between_boundary_us = 0, between_other_us = 0;
  std::size_t boundary_items = 0;
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
  PublisherStats publisher;
  StageBreakdown stages;
  std::uint64_t failed() const;
  double us_per_item() const { return per_item(total_ns); }
  double per_item(std::int64_t ns) const { return items ? static_cast<double>(ns) / 1e3 / static_cast<double>(items) : 0; }
};

// The opened backends a case runs on. The caller opens them from the URLs (backends/open.hpp),
// so the pipeline never names an adapter. A case uses only what it needs: `input` for case 5,
// `log` for cases 3-5, `objects` for case 1; the others may be null.
struct CaseBackends {
  Store& store;
  std::shared_ptr<Queue> input;
  std::shared_ptr<Queue> log;
  ObjectStore* objects = nullptr;
};

const char* case_steps(int number);
// Runs one case; throws on a setup error (unreadable data, a backend the case needs is missing).
CaseResult run_case(int number, const RunConfig& config, const Processor& processor, const CaseBackends& backends);
StageBreakdown breakdown(std::vector<Record> records);

nlohmann::json to_json(const CaseResult& r);
// The seed-style table and the stage breakdown, as printed by `overhead run`.
std::string format_case_table(const std::vector<CaseResult>& results);

}  // namespace overhead::pipe
