#include "pipe/cases.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <sstream>
#include <thread>

#include "pipe/clock.hpp"
#include "pipe/consumer.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/producer.hpp"
#include "pipe/progress.hpp"
#include "pipe/queue.hpp"
#include "pipe/record_codec.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/source.hpp"
#include "pipe/worker.hpp"

namespace overhead::pipe {

std::uint64_t CaseResult::failed() const {
  std::uint64_t n = 0;
  for (const auto& [kind, count] : failures) n += count;
  return n;
}

const char* case_steps(int number) {
  switch (number) {
    case 1: return "local JSONL > tokenize > memory > CSV to object store";
    case 2: return "local JSONL > tokenize > sync store write per item";
    case 3: return "local JSONL > tokenize > sync log-queue push > consumer > store";
    case 4: return "local JSONL > tokenize > async log-queue push > consumer > store";
    case 5: return "input queue > tokenize > async log-queue push > consumer > store";
  }
  return "?";
}

StageBreakdown breakdown(std::vector<Record> records) {
  StageBreakdown b;
  b.records = records.size();
  if (records.empty()) return b;
  std::sort(records.begin(), records.end(), [](const Record& x, const Record& y) {
    return x.worker != y.worker ? x.worker < y.worker : x.seq < y.seq;
  });
  double render = 0, encode = 0, publish = 0, del = 0, gap_b = 0, gap_o = 0, bet_b = 0, bet_o = 0;
  std::size_t n_publish = 0, n_delete = 0, n_gap_b = 0, n_gap_o = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    render += double(r.render_end - r.render_start);
    encode += double(r.encode_end - r.render_end);
    if (r.publish_acked > 0) {
      publish += double(r.publish_acked - r.publish_start);
      ++n_publish;
    }
    if (r.input_deleted > 0 && r.publish_acked > 0) {
      del += double(r.input_deleted - r.publish_acked);
      ++n_delete;
    }
    if (i > 0 && records[i - 1].worker == r.worker) {
      const double gap = double(r.render_start - records[i - 1].render_start);
      const double between = double(r.render_start - records[i - 1].encode_end);
      if (r.batch_boundary) {
        gap_b += gap;
        bet_b += between;
        ++n_gap_b;
      } else {
        gap_o += gap;
        bet_o += between;
        ++n_gap_o;
      }
    }
    b.boundary_items += r.batch_boundary;
  }
  const double n = double(records.size());
  b.render_us = render / n / 1e3;
  b.encode_us = encode / n / 1e3;
  b.publish_us = n_publish ? publish / double(n_publish) / 1e3 : 0;
  b.delete_us = n_delete ? del / double(n_delete) / 1e3 : 0;
  b.gap_boundary_us = n_gap_b ? gap_b / double(n_gap_b) / 1e3 : 0;
  b.gap_other_us = n_gap_o ? gap_o / double(n_gap_o) / 1e3 : 0;
  b.between_boundary_us = n_gap_b ? bet_b / double(n_gap_b) / 1e3 : 0;
  b.between_other_us = n_gap_o ? bet_o / double(n_gap_o) / 1e3 : 0;
  return b;
}

namespace {

std::vector<Record> scan_experiment(Store& store, const std::string& experiment) {
  return scan_in_key_order(store, experiment);
}

// Consumer running beside the worker; drained and joined by finish().
class BackgroundConsumer {
 public:
  BackgroundConsumer(std::shared_ptr<Queue> log, Store& store, DeadLetterSink& dead) {
    ConsumerOptions o;
    o.wait = std::chrono::milliseconds(20);
    o.drain = &drain_;
    consumer_ = std::make_unique<Consumer>(std::move(log), store, dead, o);
    thread_ = std::thread([this] { stats_ = consumer_->run(); });
  }
  ~BackgroundConsumer() { finish(); }
  ConsumerStats finish() {
    drain_ = true;
    if (thread_.joinable()) thread_.join();
    return stats_;
  }

 private:
  std::atomic<bool> drain_{false};
  std::unique_ptr<Consumer> consumer_;
  std::thread thread_;
  ConsumerStats stats_;
};

// Runs `n` workers on threads over one source and adds up their stats.
WorkerStats run_workers(Source& source, const Processor& processor, RecordSink& sink, DeadLetterSink& dead,
                        const WorkerOptions& options, unsigned n) {
  n = std::max(1u, n);
  std::vector<WorkerStats> stats(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  const std::string base = options.name.substr(0, options.name.rfind('-'));
  for (unsigned i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        WorkerOptions o = options;
        o.name = base + "-" + std::to_string(i);
        Worker worker(source, processor, sink, dead, o);
        stats[i] = worker.run();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  WorkerStats total;
  for (const auto& s : stats) {
    total.items += s.items;
    total.ok += s.ok;
    total.bad_input += s.bad_input;
    total.publish_failed += s.publish_failed;
    total.batches += s.batches;
    total.delete_failures += s.delete_failures;
    total.elapsed_ns = std::max(total.elapsed_ns, s.elapsed_ns);
    total.cpu_ns += s.cpu_ns;
    total.publisher.published += s.publisher.published;
    total.publisher.retries += s.publisher.retries;
    total.publisher.failed += s.publisher.failed;
    total.publisher.stamp_failures += s.publisher.stamp_failures;
    total.publisher.max_outstanding = std::max(total.publisher.max_outstanding, s.publisher.max_outstanding);
  }
  return total;
}

}  // namespace

CaseResult run_case(int number, const RunConfig& config, const Processor& processor, const CaseBackends& backends) {
  if (number < 1 || number > 5) throw std::invalid_argument("case must be 1..5, got " + std::to_string(number));
  Store& store = backends.store;
  if (number == 1 && !backends.objects) throw std::invalid_argument("case 1 needs an object store");
  if (number >= 3 && !backends.log) throw std::invalid_argument("case " + std::to_string(number) + " needs a log queue");
  if (number == 5 && !backends.input) throw std::invalid_argument("case 5 needs an input queue");
  CaseResult result;
  result.number = number;
  result.steps = case_steps(number);
  result.experiment = config.experiment + "-case" + std::to_string(number);
  result.workers = std::max(1u, config.workers);
  std::filesystem::create_directories(config.out_dir);
  result.dead_letter_file = (std::filesystem::path(config.out_dir) / ("dead_letters_case" + std::to_string(number) + ".jsonl")).string();
  std::filesystem::remove(result.dead_letter_file);
  DeadLetterSink dead(result.dead_letter_file);

  WorkerOptions wo;
  wo.name = "case" + std::to_string(number) + "-worker-0";
  wo.experiment = result.experiment;
  wo.case_number = number;
  wo.batch = config.batch;
  wo.prefetch = config.prefetch;
  wo.max_in_flight = config.max_in_flight;
  wo.max_prompt_bytes = config.max_prompt_bytes;
  wo.publishers = (number == 4 || number == 5) ? config.publishers : 0;

  std::shared_ptr<Queue> log;
  std::unique_ptr<BackgroundConsumer> consumer;
  std::unique_ptr<RecordSink> sink;
  MemorySink* memory = nullptr;
  if (number == 1) {
    auto m = std::make_unique<MemorySink>();
    memory = m.get();
    sink = std::move(m);
  } else if (number == 2) {
    sink = std::make_unique<StoreSink>(store);
  } else {
    log = backends.log;
    sink = std::make_unique<QueueSink>(log);
  }

  const std::string label = "case " + std::to_string(number);
  WorkerStats ws;
  std::int64_t start = 0;
  std::int64_t cpu_start = 0;
  if (number <= 4) {
    start = monotonic_ns();
    cpu_start = process_cpu_ns();
    auto records = load_source_records(config.data, config.limit, dead);
    FileSource source(std::move(records), config.tokenizers);
    Progress progress(label, source.expected(), config.progress);
    wo.progress = &progress.counter();
    if (log) consumer = std::make_unique<BackgroundConsumer>(log, store, dead);
    ws = run_workers(source, processor, *sink, dead, wo, config.workers);
  } else {
    auto in = backends.input;
    auto records = load_source_records(config.data, config.limit, dead);
    const ProducerStats ps = produce(records, config.tokenizers, *in, std::min(config.batch, kMaxQueueBatch), &dead);
    result.enqueue_ns = ps.elapsed_ns;
    wo.visibility = in->visibility_timeout();
    // Everything is enqueued already: the worker stops at the first empty receive.
    QueueSource source(in, std::chrono::milliseconds(0), std::chrono::milliseconds(0), nullptr, ps.messages);
    Progress progress(label, ps.messages, config.progress);
    wo.progress = &progress.counter();
    consumer = std::make_unique<BackgroundConsumer>(log, store, dead);
    start = monotonic_ns();
    cpu_start = process_cpu_ns();
    ws = run_workers(source, processor, *sink, dead, wo, config.workers);
  }
  result.total_ns = monotonic_ns() - start;
  result.process_cpu_ns = process_cpu_ns() - cpu_start;
  result.worker_cpu_ns = ws.cpu_ns;
  result.items = ws.items;
  result.ok = ws.ok;
  result.delete_failures = ws.delete_failures;
  result.publisher = ws.publisher;

  std::vector<Record> stored;
  if (number == 1) {
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
      dead.add(DeadLetter{"store_failed", stored[f.index].experiment_tokenizer + "/" + stored[f.index].id,
                          stored[f.index].tokenizer, store.url() + ": " + f.failure.message, ""});
  } else {
    if (consumer) {
      const std::int64_t drain_start = monotonic_ns();
      consumer->finish();
      result.drain_ns = monotonic_ns() - drain_start;
    }
    stored = scan_experiment(store, result.experiment);
  }
  result.stored = stored.size();
  result.stages = breakdown(std::move(stored));
  result.failures = dead.counts();
  return result;
}

nlohmann::json to_json(const CaseResult& r) {
  nlohmann::json j;
  j["case"] = r.number;
  j["steps"] = r.steps;
  j["experiment"] = r.experiment;
  j["total_s"] = double(r.total_ns) / 1e9;
  j["enqueue_s"] = double(r.enqueue_ns) / 1e9;
  j["drain_s"] = double(r.drain_ns) / 1e9;
  j["workers"] = r.workers;
  j["items"] = r.items;
  j["ok"] = r.ok;
  j["stored"] = r.stored;
  j["us_per_item"] = r.us_per_item();
  j["worker_cpu_us_per_item"] = r.per_item(r.worker_cpu_ns);
  j["process_cpu_us_per_item"] = r.per_item(r.process_cpu_ns);
  j["failed"] = r.failed();
  j["failures"] = r.failures;
  j["delete_failures"] = r.delete_failures;
  j["dead_letter_file"] = r.dead_letter_file;
  if (!r.artifact.empty()) j["csv"] = r.artifact;
  j["publisher"] = {{"published", r.publisher.published}, {"retries", r.publisher.retries},
                    {"failed", r.publisher.failed}, {"max_outstanding", r.publisher.max_outstanding}};
  j["stages_us"] = {{"render", r.stages.render_us},           {"encode", r.stages.encode_us},
                    {"publish", r.stages.publish_us},         {"delete_after_ack", r.stages.delete_us},
                    {"gap_boundary", r.stages.gap_boundary_us}, {"gap_other", r.stages.gap_other_us},
                    {"between_boundary", r.stages.between_boundary_us}, {"between_other", r.stages.between_other_us},
                    {"boundary_items", r.stages.boundary_items}};
  return j;
}

std::string format_case_table(const std::vector<CaseResult>& results) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-4s  %-64s %10s %8s %9s %7s %11s %11s\n", "case", "steps", "total s", "items",
                "us/item", "failed", "cpu us/it", "wkr cpu us");
  out << line;
  for (const auto& r : results) {
    std::snprintf(line, sizeof line, "%-4d  %-64s %10.3f %8llu %9.2f %7llu %11.2f %11.2f\n", r.number, r.steps.c_str(),
                  double(r.total_ns) / 1e9, static_cast<unsigned long long>(r.items), r.us_per_item(),
                  static_cast<unsigned long long>(r.failed()), r.per_item(r.process_cpu_ns), r.per_item(r.worker_cpu_ns));
    out << line;
  }
  out << "(cpu us/it: CPU time of the whole process per item, all threads; wkr cpu us: of the worker threads.\n"
         " On a shared machine wall time also measures the neighbours; CPU time measures this run.)\n";
  out << "\nstage breakdown (mean us per item; gap = previous item's start to this one's, on the same worker;\n"
         "between = previous item's encode end to this one's start: publish call and batch turnover)\n";
  std::snprintf(line, sizeof line, "%-4s %8s %8s %8s %8s %9s %9s %9s %9s %9s %9s\n", "case", "render", "encode",
                "publish", "delete", "gap bnd", "gap oth", "betw bnd", "betw oth", "enqueue s", "drain s");
  out << line;
  for (const auto& r : results) {
    std::snprintf(line, sizeof line, "%-4d %8.2f %8.2f %8.2f %8.2f %9.2f %9.2f %9.2f %9.2f %9.3f %9.3f\n", r.number,
                  r.stages.render_us, r.stages.encode_us, r.stages.publish_us, r.stages.delete_us,
                  r.stages.gap_boundary_us, r.stages.gap_other_us, r.stages.between_boundary_us,
                  r.stages.between_other_us, double(r.enqueue_ns) / 1e9, double(r.drain_ns) / 1e9);
    out << line;
  }
  return out.str();
}

}  // namespace overhead::pipe
