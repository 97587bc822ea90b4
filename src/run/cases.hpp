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

#include "util/line_reader.hpp"
#include "ports/object_store.hpp"
#include "pipe/processor.hpp"
#include "pipe/publisher.hpp"
#include "ports/queue.hpp"
#include "ports/record.hpp"
#include "run/run_summary.hpp"
#include "ports/store.hpp"
#include "pipe/worker.hpp"

namespace overhead::run {

// A case is data: where its items come from, where its records go, and how they are published.
enum class CaseSource { file, input_queue };  // the local JSONL, or the input queue filled by the producer first
enum class CaseSink { memory_csv, store, log_queue };  // memory then one CSV; a store write per item; the log queue
enum class PublisherMode { sync, async };  // in the worker's thread, or the pool of worker.publishers threads

struct CasePreset {
  int number;
  CaseSource source;
  CaseSink sink;
  PublisherMode publisher;
  const char* steps;  // the seed's description, as printed in the table
};

inline constexpr CasePreset kCasePresets[] = {
    {1, CaseSource::file, CaseSink::memory_csv, PublisherMode::sync, "local JSONL > tokenize > memory > CSV to object store"},
    {2, CaseSource::file, CaseSink::store, PublisherMode::sync, "local JSONL > tokenize > sync store write per item"},
    {3, CaseSource::file, CaseSink::log_queue, PublisherMode::sync, "local JSONL > tokenize > sync log-queue push > consumer > store"},
    {4, CaseSource::file, CaseSink::log_queue, PublisherMode::async, "local JSONL > tokenize > async log-queue push > consumer > store"},
    {5, CaseSource::input_queue, CaseSink::log_queue, PublisherMode::async, "input queue > tokenize > async log-queue push > consumer > store"},
};

// The preset numbered `number`; throws std::invalid_argument for a number not in kCasePresets.
const CasePreset& case_preset(int number);

struct RunConfig {
  std::string data;                       // the seed's JSONL (.gz ok)
  std::vector<std::string> tokenizers;
  std::string queue_url = "mem:in";       // shown in summary.json; the caller opens it
  std::string log_queue_url = "mem:log";
  std::string store_url;                  // empty = sqlite:<out>/records.db
  std::string out_dir = "out";
  std::size_t limit = 0;                  // first N records (0 = all)
  std::size_t max_line_bytes = util::kDefaultMaxLineBytes;  // longer data lines are dead-lettered
  unsigned workers = 1;                   // worker threads sharing the source (the seed had one)
  bool progress = true;
  // The worker's settings. Per case, name, experiment ("<experiment>-caseN") and case_number are
  // set from it, and publishers is used only by the asynchronous cases (sync ones take 0).
  pipe::WorkerOptions worker = default_run_worker();

  static pipe::WorkerOptions default_run_worker() {
    pipe::WorkerOptions o;
    o.publishers = 10;  // the seed's pool
    return o;
  }
};


// The opened backends a case runs on. The caller opens them from the URLs (backends/open.hpp),
// so the pipeline never names an adapter. A case uses only what its preset needs: `input` for
// CaseSource::input_queue, `log` for CaseSink::log_queue, `objects` for CaseSink::memory_csv;
// the others may be null.
struct CaseBackends {
  ports::Store& store;
  std::shared_ptr<ports::Queue> input;
  std::shared_ptr<ports::Queue> log;
  ports::ObjectStore* objects = nullptr;
};

// Runs one case; throws on a setup error (unreadable data, a backend the case needs is missing).
CaseResult run_case(int number, const RunConfig& config, const pipe::Processor& processor, const CaseBackends& backends);

}  // namespace overhead::run
