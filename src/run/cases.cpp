#include "run/cases.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <sstream>
#include <thread>

#include "ports/clock.hpp"
#include "pipe/consumer.hpp"
#include "pipe/consumer_host.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/producer.hpp"
#include "pipe/progress.hpp"
#include "ports/queue.hpp"
#include "ports/record_codec.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "pipe/worker.hpp"
#include "pipe/worker_host.hpp"

namespace overhead::run {

using pipe::ConsumerHost;
using pipe::ConsumerOptions;
using pipe::DeadLetter;
using pipe::DeadLetterKind;
using pipe::DeadLetterSink;
using pipe::FileSource;
using pipe::kind_name;
using pipe::load_source_records;
using pipe::MemorySink;
using pipe::Processor;
using pipe::produce;
using pipe::ProducerStats;
using pipe::Progress;
using pipe::QueueSink;
using pipe::QueueSource;
using pipe::RecordSink;
using pipe::Source;
using pipe::StoreSink;
using pipe::WorkerHost;
using pipe::WorkerHostOptions;
using pipe::WorkerOptions;
using pipe::WorkerStats;
using ports::kMaxQueueBatch;
using ports::monotonic_ns;
using ports::process_cpu_ns;
using ports::Queue;
using ports::Record;
using ports::RetryPolicy;
using ports::scan_in_key_order;
using ports::Store;
using ports::write_records_csv;

const CasePreset& case_preset(int number) {
  for (const auto& p : kCasePresets)
    if (p.number == number) return p;
  throw std::invalid_argument("case must be 1..5, got " + std::to_string(number));
}

namespace {

std::vector<Record> scan_experiment(Store& store, const std::string& experiment) {
  return scan_in_key_order(store, experiment);
}

// The consumer running beside the case's workers (pipe/consumer_host.hpp); drained and joined
// once they finished.
std::unique_ptr<ConsumerHost> background_consumer(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead) {
  ConsumerOptions o;
  o.wait = std::chrono::milliseconds(20);
  return std::make_unique<ConsumerHost>(std::move(log), store, dead, o);
}

}  // namespace

CaseResult run_case(int number, const RunConfig& config, const Processor& processor, const CaseBackends& backends) {
  const CasePreset& preset = case_preset(number);
  const std::string label = "case " + std::to_string(number);
  Store& store = backends.store;
  if (preset.sink == CaseSink::memory_csv && !backends.objects) throw std::invalid_argument(label + " needs an object store");
  if (preset.sink == CaseSink::log_queue && !backends.log) throw std::invalid_argument(label + " needs a log queue");
  if (preset.source == CaseSource::input_queue && !backends.input) throw std::invalid_argument(label + " needs an input queue");
  CaseResult result;
  result.number = number;
  result.steps = preset.steps;
  result.experiment = config.worker.experiment + "-case" + std::to_string(number);
  result.workers = std::max(1u, config.workers);
  std::filesystem::create_directories(config.out_dir);
  result.dead_letter_file = (std::filesystem::path(config.out_dir) / ("dead_letters_case" + std::to_string(number) + ".jsonl")).string();
  std::filesystem::remove(result.dead_letter_file);
  DeadLetterSink dead(result.dead_letter_file);

  WorkerOptions wo = config.worker;
  wo.name = "case" + std::to_string(number) + "-worker-0";
  wo.experiment = result.experiment;
  wo.case_number = number;
  if (preset.publisher == PublisherMode::sync) wo.publishers = 0;

  std::shared_ptr<Queue> log;
  std::unique_ptr<ConsumerHost> consumer;
  std::unique_ptr<RecordSink> sink;
  MemorySink* memory = nullptr;
  switch (preset.sink) {
    case CaseSink::memory_csv: {
      auto m = std::make_unique<MemorySink>();
      memory = m.get();
      sink = std::move(m);
      break;
    }
    case CaseSink::store: sink = std::make_unique<StoreSink>(store); break;
    case CaseSink::log_queue:
      log = backends.log;
      sink = std::make_unique<QueueSink>(log);
      break;
  }

  // The workers of the case, built by the one worker host (worker_host.hpp); `wo` is read when
  // they start, so the progress counter set below reaches them.
  const auto run_workers = [&](Source& source, RecordSink& records, DeadLetterSink& letters) {
    WorkerHostOptions host_options;
    host_options.worker = wo;
    host_options.threads = std::max(1u, config.workers);
    WorkerHost host(std::move(host_options), &processor);
    return host.run(source, records, letters);
  };
  WorkerStats ws;
  std::int64_t start = 0;
  std::int64_t cpu_start = 0;
  if (preset.source == CaseSource::file) {
    start = monotonic_ns();
    cpu_start = process_cpu_ns();
    auto records = load_source_records(config.data, config.limit, dead, config.max_line_bytes);
    FileSource source(std::move(records), config.tokenizers);
    Progress progress(label, source.expected(), config.progress);
    wo.progress = &progress.counter();
    if (log) consumer = background_consumer(log, store, dead);
    ws = run_workers(source, *sink, dead);
  } else {
    auto in = backends.input;
    auto records = load_source_records(config.data, config.limit, dead, config.max_line_bytes);
    const ProducerStats ps = produce(records, config.tokenizers, *in, std::min(wo.batch, kMaxQueueBatch), &dead,
                                     RetryPolicy::jittered(), wo.decoder != nullptr);
    result.enqueue_ns = ps.elapsed_ns;
    wo.visibility = in->visibility_timeout();
    // Everything is enqueued already: the worker stops at the first empty receive.
    QueueSource source(in, std::chrono::milliseconds(0), std::chrono::milliseconds(0), nullptr, ps.messages);
    Progress progress(label, ps.messages, config.progress);
    wo.progress = &progress.counter();
    consumer = background_consumer(log, store, dead);
    start = monotonic_ns();
    cpu_start = process_cpu_ns();
    ws = run_workers(source, *sink, dead);
  }
  result.total_ns = monotonic_ns() - start;
  result.process_cpu_ns = process_cpu_ns() - cpu_start;
  result.worker_cpu_ns = ws.cpu_ns;
  result.items = ws.items;
  result.ok = ws.ok;
  result.delete_failures = ws.delete_failures;
  result.publisher = ws.publisher;

  std::vector<Record> stored;
  if (memory) {
    // The CSV is part of case 1's job, so inside the total.
    const std::int64_t csv_start = monotonic_ns();
    stored = memory->take();
    std::ostringstream csv;
    write_records_csv(csv, stored);
    result.artifact = result.experiment + ".csv";
    backends.objects->put(result.artifact, csv.str());
    result.total_ns += monotonic_ns() - csv_start;
    result.process_cpu_ns = process_cpu_ns() - cpu_start;
    // Outside the timing: so the analysis sees case 1 too. A record the store refuses is lost to
    // the analysis only, not to the CSV; say so instead of dropping it silently.
    for (const auto& f : store.upsert_batch(stored))
      dead.add(DeadLetter{kind_name(DeadLetterKind::store_failed), stored[f.index].experiment_tokenizer + "/" + stored[f.index].id,
                          stored[f.index].tokenizer, store.url() + ": " + f.failure.message, ""});
  } else {
    if (consumer) {
      const std::int64_t drain_start = monotonic_ns();
      consumer->drain();
      (void)consumer->join();
      result.drain_ns = monotonic_ns() - drain_start;
    }
    stored = scan_experiment(store, result.experiment);
    // Only this run's records: the experiment may hold rows of earlier or concurrent runs.
    if (!wo.run_id.empty())
      std::erase_if(stored, [&](const Record& r) { return r.run_id != wo.run_id; });
  }
  result.stored = stored.size();
  result.stages = breakdown(std::move(stored));
  result.failures = dead.counts();
  return result;
}

}  // namespace overhead::run
