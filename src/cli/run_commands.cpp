// `overhead run` (the five cases on one machine) and the separate processes of a shared-backend
// deployment: `overhead enqueue`, `overhead worker`, `overhead consume`.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "backends/open.hpp"
#include "cli/chat_input.hpp"
#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/worker_flags.hpp"
#include "ports/backend_url.hpp"
#include "run/cases.hpp"
#include "pipe/chat_token_processor.hpp"
#include "ports/clock.hpp"
#include "pipe/consumer.hpp"
#include "pipe/consumer_host.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/producer.hpp"
#include "pipe/progress.hpp"
#include "ports/queue.hpp"
#include "pipe/record_sink.hpp"
#include "pipe/run_id.hpp"
#include "pipe/source.hpp"
#include "pipe/lane_source.hpp"
#include "pipe/crash_point.hpp"
#include "pipe/worker.hpp"
#include "pipe/worker_host.hpp"
#include "report/run_selection.hpp"
#include "report/write_report.hpp"
#include "tok/resolve.hpp"

namespace overhead::cli {

namespace {

using namespace overhead::pipe;
using ports::kMaxQueueBatch;
using ports::ObjectStore;
using ports::Queue;
using ports::Record;
using ports::RetryPolicy;
using ports::scan_in_key_order;
using ports::SiblingRole;
using ports::Store;
using run::case_preset;
using run::CaseBackends;
using run::CasePreset;
using run::CaseResult;
using run::CaseSink;
using run::CaseSource;
using run::format_case_table;
using run::kCasePresets;
using run::run_case;
using run::run_summary_json;
using run::RunConfig;
using backends::open_object_store;
using backends::open_queue;
using backends::open_store;

// A URL its backend refuses (unknown scheme, a bad, unknown or out-of-range parameter) is a usage
// error of the option that gave it: exit 2, naming the option.
std::shared_ptr<Queue> queue_option(const char* option, const std::string& url) {
  try {
    return open_queue(url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(option, e.what());
  }
}

std::unique_ptr<Store> store_option(const std::string& url) {
  try {
    return open_store(url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--store", e.what());
  }
}

std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

void install_stop_handler() {
  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);
}

// The bundled data: relative to the working directory (a clone's root), else where the build
// was configured to find it.
std::string default_data() {
  const std::string rel = "data/jmtbench/records.jsonl.gz";
  if (std::filesystem::exists(rel)) return rel;
  return std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/jmtbench/records.jsonl.gz";
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    if (!part.empty()) out.push_back(part);
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

struct CommonOptions {
  std::string data;
  std::string tokenizers = join(tok::seed_tokenizer_names());
  std::string queue = "mem:in";
  std::string log_queue = "mem:log";
  std::string store;
  std::string object_store;  // empty = file:<out> (case 1's CSV)
  std::string out = "out";
  std::size_t batch = 10;  // enqueue: messages per send
  std::size_t limit = 0;
  std::size_t max_line_bytes = util::kDefaultMaxLineBytes;
  bool allow_failures = false;
  bool no_progress = false;
  bool no_report = false;
  double idle_exit = 0;  // worker, consume: 0 = never stop on an empty queue (idle_wait())
  std::string name;
  bool with_answers = false;     // enqueue: carry the records' answers for a worker's decoder
  int case_number = 5;
};

// The accepted ranges. A queue receives and sends at most 10 messages at once (as SQS does); the
// upper bounds on threads and sizes only catch typing slips, they are far above anything useful.
constexpr std::int64_t kMaxLimit = 1'000'000'000;
constexpr double kMaxIdleSeconds = 7 * 24 * 3600;

// --idle-exit of `worker` and `consume`: 0 (the default) means never, so a worker or consumer
// serving a gateway does not leave in a quiet spell and leave the gateway's requests to time out;
// they run until SIGTERM or SIGINT. A positive value is for batch runs that drain a queue and end.
// "Never" is a wait no run reaches (a century), not duration::max(), which overflows once the
// pipeline compares it with nanoseconds.
std::chrono::milliseconds idle_wait(double seconds) {
  if (seconds <= 0) return std::chrono::hours(24 * 365 * 100);
  return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}
constexpr const char* kIdleExitHelp =
    "Stop after the queue stayed empty this many seconds (0, the default: never; run until SIGTERM or SIGINT, "
    "as workers and consumers serving a gateway must)";

// --case of `run`: "all", or a comma list of case numbers 1..5.
std::string case_list_error(const std::string& text) {
  if (text == "all") return "";
  const std::string expected = "expected 1..5, a comma list of them, or all, got '" + text + "'";
  if (!name_list_error(text).empty()) return expected;  // "", "1,,2", "3,"
  for (const auto& c : split_commas(text))
    if (c.size() != 1 || c[0] < '1' || c[0] > '5') return expected;
  return "";
}

void add_data_options(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("--data", o.data, "The seed's JSONL records (.gz ok); default: the bundled MT-Bench records");
  cmd.add_option("--tokenizers", o.tokenizers, "Comma-separated tokenizer names")->check(name_list())->capture_default_str();
  cmd.add_option("--limit", o.limit, "Use only the first N records (0 = all)")->check(integer_in(0, kMaxLimit));
  add_max_line_bytes_option(cmd, o.max_line_bytes);
}

std::string store_url(const CommonOptions& o) {
  return o.store.empty() ? "sqlite:" + (std::filesystem::path(o.out) / "records.db").string() : o.store;
}

int report_failures(const std::map<std::string, std::size_t>& failures, const CommonOptions& o, const std::string& where) {
  std::size_t total = 0;
  for (const auto& [kind, n] : failures) total += n;
  if (total == 0) return 0;
  std::fprintf(stderr, "overhead: %zu dead letter(s) (", total);
  bool first = true;
  for (const auto& [kind, n] : failures) {
    std::fprintf(stderr, "%s%s %zu", first ? "" : ", ", kind.c_str(), n);
    first = false;
  }
  std::fprintf(stderr, "); see %s\n", where.c_str());
  return o.allow_failures ? 0 : 1;
}

// A reason may open with the letter's own origin (a log message the consumer could not read):
// printed once.
std::string_view reason_after_origin(const DeadLetter& l) {
  std::string_view reason = l.reason;
  if (reason.starts_with(l.origin + ": ")) reason.remove_prefix(l.origin.size() + 2);
  return reason;
}

void print_first_letters(const DeadLetterSink& dead, std::size_t n) {
  std::size_t i = 0;
  for (const auto& l : dead.letters()) {
    if (i++ == n) break;
    const std::string reason(reason_after_origin(l));
    std::fprintf(stderr, "  %s: %s [%s]%s%s\n", l.origin.c_str(), reason.c_str(), l.kind.c_str(),
                 l.tokenizer.empty() ? "" : " tokenizer ", l.tokenizer.c_str());
  }
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string joined_forms(const auto& forms) {
  std::string out;
  for (const auto& f : forms) out += "\n    " + std::string(f);
  return out;
}

// What `run --help` says beyond the options: the five cases and where they read and write, and
// the backends' URL forms, from the same tables the code runs on.
std::string run_help_footer() {
  std::string text = "The five cases (the seed's ablation; --case picks them):";
  for (const auto& p : kCasePresets) text += "\n  " + std::to_string(p.number) + "  " + p.steps;
  text += "\n\nBackends, by URL (parameters and examples: docs/pipeline.md; many machines: docs/deploy.md):";
  text += "\n  --queue, --log-queue:" + joined_forms(backends::queue_url_forms());
  text += "\n  --store:" + joined_forms(backends::store_url_forms());
  text += "\n  --object-store:" + joined_forms(backends::object_store_url_forms());
  return text;
}

// Every item of a run or worker would be dead-lettered when none of its tokenizers loads: stop
// before any input is taken, saying why and what to do.
void require_a_tokenizer(const std::map<std::string, std::string>& load_errors, std::size_t tokenizers) {
  for (const auto& [name, err] : load_errors)
    std::fprintf(stderr, "overhead: tokenizer %s cannot be loaded (its items are dead-lettered): %s\n", name.c_str(),
                 err.c_str());
  if (load_errors.size() < tokenizers) return;
  throw std::runtime_error("none of the tokenizers of --tokenizers loads (see above); give a short name (" +
                           join_names(tok::known_tokenizer_names()) +
                           "), an HF model id, or a folder holding tokenizer.json");
}

int run_command(const CommonOptions& o, const WorkerFlags& flags, const std::string& cases) {
  RunConfig cfg;
  cfg.data = o.data.empty() ? default_data() : o.data;
  cfg.tokenizers = split_commas(o.tokenizers);
  cfg.queue_url = o.queue;
  cfg.log_queue_url = o.log_queue;
  cfg.out_dir = o.out;
  cfg.store_url = store_url(o);
  cfg.limit = o.limit;
  cfg.max_line_bytes = o.max_line_bytes;
  const WorkerHostOptions host = worker_host_options(flags);
  cfg.workers = host.threads;
  cfg.worker = host.worker;
  cfg.progress = !o.no_progress;
  if (!std::filesystem::exists(cfg.data)) throw std::runtime_error(cfg.data + ": no such data file");
  std::vector<int> numbers;
  if (cases == "all")
    for (const auto& p : kCasePresets) numbers.push_back(p.number);
  else
    for (const auto& c : split_commas(cases)) numbers.push_back(c[0] - '0');  // checked by case_list_error

  std::filesystem::create_directories(cfg.out_dir);
  // The backends first: a refused URL is a usage error, before the tokenizers take their time.
  auto store = store_option(cfg.store_url);
  // Each backend is opened once, and only when a chosen case uses it (a sqlite-queue: URL would
  // create its file).
  auto uses = [&](auto pred) {
    return std::any_of(numbers.begin(), numbers.end(), [&](int n) { return pred(case_preset(n)); });
  };
  CaseBackends backends{*store, nullptr, nullptr, nullptr};
  if (uses([](const CasePreset& p) { return p.source == CaseSource::input_queue; }))
    backends.input = queue_option("--queue", cfg.queue_url);
  if (uses([](const CasePreset& p) { return p.sink == CaseSink::log_queue; }))
    backends.log = queue_option("--log-queue", cfg.log_queue_url);
  ChatTokenProcessor processor(cfg.tokenizers, host.date);
  require_a_tokenizer(processor.load_errors(), cfg.tokenizers.size());
  std::unique_ptr<ObjectStore> objects;
  if (uses([](const CasePreset& p) { return p.sink == CaseSink::memory_csv; }))
    try {
      objects = open_object_store(o.object_store.empty() ? "file:" + cfg.out_dir : o.object_store);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError("--object-store", e.what());
    }
  backends.objects = objects.get();

  const std::string& run_id = cfg.worker.run_id;
  std::cout << "run id: " << run_id << "\n" << std::flush;
  std::vector<CaseResult> results;
  for (int n : numbers) results.push_back(run_case(n, cfg, processor, backends));

  std::cout << "\n" << format_case_table(results) << std::flush;
  const nlohmann::json summary = run_summary_json(cfg, store->url(), results);
  std::map<std::string, std::size_t> failures = summary["failures"].get<std::map<std::string, std::size_t>>();
  const auto summary_path = std::filesystem::path(cfg.out_dir) / "summary.json";
  std::ofstream(summary_path) << summary.dump(2) << "\n";
  std::cout << "\nrecords: " << store->url() << "\nsummary: " << summary_path.string() << "\n";
  if (!o.no_report) {
    // The run ends with its own analysis: the headline fit per case and tokenizer, and the report.
    // Exactly this run's records: the experiment may also hold rows of earlier runs, or of a run
    // writing into the same store right now; they carry other run ids.
    std::vector<Record> records;
    for (const auto& r : results) {
      auto found = scan_in_key_order(*store, r.experiment);
      std::vector<report::ExperimentRuns> runs = report::runs_by_experiment(found);
      if (const std::size_t others = report::keep_run(found, run_id); others)
        std::printf("note: %zu record(s) of experiment %s in %s are from other runs; this report covers run %s only "
                    "(`overhead analyze --run ID` picks one run, by default it covers all): %s\n",
                    others, r.experiment.c_str(), store->url().c_str(), run_id.c_str(),
                    report::describe_runs(runs.front()).c_str());
      for (auto& rec : found) records.push_back(std::move(rec));
    }
    report::ReportOptions ro;
    ro.out_dir = (std::filesystem::path(cfg.out_dir) / "report").string();
    ro.compare_seed = true;
    ro.source = store->url() + " (run " + run_id + ")";
    try {
      std::cout << "\n" << std::flush;
      report::print_headline(report::write_report(records, ro));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "overhead: the report could not be written: %s\n", e.what());
    }
  }
  return report_failures(failures, o, (std::filesystem::path(cfg.out_dir) / "dead_letters_case*.jsonl").string());
}

int enqueue_command(const CommonOptions& o) {
  const std::string data = o.data.empty() ? default_data() : o.data;
  std::filesystem::create_directories(o.out);  // a command makes its own --out folder, and no other
  const auto dl_path = (std::filesystem::path(o.out) / "dead_letters_enqueue.jsonl").string();
  DeadLetterSink dead(dl_path);
  auto queue = queue_option("--queue", o.queue);
  auto records = load_source_records(data, o.limit, dead, o.max_line_bytes);
  const ProducerStats ps = produce(records, split_commas(o.tokenizers), *queue, std::min(o.batch, kMaxQueueBatch), &dead,
                                   RetryPolicy::jittered(), o.with_answers);
  std::printf("enqueued %llu messages in %llu batches to %s in %.3f s\n", static_cast<unsigned long long>(ps.messages),
              static_cast<unsigned long long>(ps.batches), queue->url().c_str(), double(ps.elapsed_ns) / 1e9);
  print_first_letters(dead, 10);
  return report_failures(dead.counts(), o, dl_path);
}

// Cancellation from gateways (docs/serve.md): a worker whose generations can be stopped (a decoder
// with --max-decodes > 0) reads its own control queue, "<input>-ctl-<host>-<pid>" next to the input
// queue, and names it to a gateway as it takes up the gateway's item. A queue that cannot be opened
// (on SQS it must exist) leaves the worker without it: its generations then run to their end.
void open_control_queue(WorkerHostOptions& ho, const std::string& name) {
  if (!ho.worker.decoder || ho.worker.max_decodes == 0 || !ho.family->shared()) return;
  try {
    ho.control_name = ho.family->own_sibling_name(SiblingRole::control);
    ho.control_queue = ho.family->open(ho.control_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "worker %s: no control queue (%s): gateways cannot cancel its generations\n", name.c_str(), e.what());
    ho.control_name.clear();
    ho.control_queue.reset();
  }
}

int worker_command(const CommonOptions& o, const WorkerFlags& flags) {
  install_stop_handler();
  const std::string name = o.name.empty() ? "worker-" + std::to_string(::getpid()) : o.name;
  std::filesystem::create_directories(o.out);  // a command makes its own --out folder, and no other
  const auto dl_path = (std::filesystem::path(o.out) / ("dead_letters_" + name + ".jsonl")).string();
  DeadLetterSink dead(dl_path);
  auto in = queue_option("--queue", o.queue);
  auto log = queue_option("--log-queue", o.log_queue);
  const auto idle = idle_wait(o.idle_exit);
  const auto receive_wait = std::min(idle, std::chrono::milliseconds(1000));
  auto input_source = std::make_shared<QueueSource>(in, receive_wait, idle, &g_stop);
  // A gateway's request (`overhead serve` over this queue) names its reply queue; the worker
  // answers there once the record is published or the item refused (reply/queue_replies.hpp).
  // Items without a reply queue are not answered. Over a shared queue a gateway can reach the
  // worker, so without --max-decodes it streams as serve does (cli/worker_flags.cpp).
  const auto family = backends::open_queue_family(o.queue);
  WorkerHostOptions ho = worker_host_options(flags, family->shared());
  ho.tokenizers = split_commas(o.tokenizers);
  ho.family = family;
  ho.worker.name = name;
  ho.worker.case_number = o.case_number;
  ho.worker.visibility = in->visibility_timeout();
  ho.worker.fault = crash_point_from_env();  // kill tests only: unset in any real deployment
  ho.number_threads = false;
  open_control_queue(ho, name);
  // The generations in flight are named when they stream (the default over a shared queue).
  const std::string in_flight = ho.worker.decoder && ho.worker.max_decodes > 0
                                    ? ", " + std::to_string(ho.worker.max_decodes) + " generations in flight"
                                    : std::string();
  std::printf("worker %s: run id %s%s%s%s\n", name.c_str(), ho.worker.run_id.c_str(), ho.worker.decoder ? ", decoder " : "",
              ho.worker.decoder ? ho.worker.decoder->describe().c_str() : "", in_flight.c_str());
  std::fflush(stdout);
  Progress progress("worker " + name, 0, !o.no_progress);
  ho.worker.progress = &progress.counter();
  const std::size_t tokenizer_count = ho.tokenizers.size();
  // The batch lane beside the input queue (pipe/lane_source.hpp): interactive items first, batch
  // items in idle capacity. A queue without siblings (mem:) has none.
  std::unique_ptr<Source> lanes;
  if (family->shared()) {
    auto lane = std::make_shared<QueueSource>(family->open(family->batch_lane_name()), receive_wait, idle, &g_stop);
    lanes = std::make_unique<LaneSource>(input_source, std::move(lane), lane_rule_for(ho.worker.max_decodes, ho.threads));
  }
  Source& source = lanes ? *lanes : static_cast<Source&>(*input_source);
  WorkerHost host(std::move(ho));
  require_a_tokenizer(host.load_errors(), tokenizer_count);
  QueueSink log_sink(log);
  const WorkerStats ws = host.run(source, log_sink, dead);
  if (const auto* replies = host.queue_replies(); replies && replies->counts().sent + replies->counts().failed > 0) {
    const auto rc = replies->counts();
    std::printf("worker %s: %llu replies to gateways sent in %llu messages, %llu messages not sent\n", name.c_str(),
                static_cast<unsigned long long>(rc.sent), static_cast<unsigned long long>(rc.messages),
                static_cast<unsigned long long>(rc.failed));
  }
  if (const auto cancels = host.cancels_received(); cancels > 0)
    std::printf("worker %s: %llu cancels from gateways\n", name.c_str(), static_cast<unsigned long long>(cancels));
  std::printf("worker %s: %llu items, %llu records, %llu failed, %llu batches, %llu deletes failed in %.3f s%s\n",
              name.c_str(), static_cast<unsigned long long>(ws.items), static_cast<unsigned long long>(ws.ok),
              static_cast<unsigned long long>(ws.bad_input + ws.publish_failed),
              static_cast<unsigned long long>(ws.batches), static_cast<unsigned long long>(ws.delete_failures),
              double(ws.elapsed_ns) / 1e9, g_stop.load() ? " (stopped by signal)" : "");
  if (ws.prompt_token_mismatches > 0)
    std::printf("worker %s: %llu answers whose engine read another number of prompt tokens than were sent: the engine's "
                "tokenizer is not the item's (the records' prompt_tokens_sent and engine_prompt_tokens show which)\n",
                name.c_str(), static_cast<unsigned long long>(ws.prompt_token_mismatches));
  print_first_letters(dead, 10);
  return report_failures(dead.counts(), o, dl_path);
}

int consume_command(const CommonOptions& o) {
  install_stop_handler();
  std::filesystem::create_directories(o.out);  // a command makes its own --out folder, and no other
  const auto dl_path = (std::filesystem::path(o.out) / "dead_letters_consume.jsonl").string();
  DeadLetterSink dead(dl_path);
  auto log = queue_option("--log-queue", o.log_queue);
  auto store = store_option(store_url(o));
  ConsumerOptions co;
  co.idle_exit = idle_wait(o.idle_exit);
  co.wait = std::min(co.idle_exit, std::chrono::milliseconds(1000));
  co.stop = &g_stop;
  Progress progress("consume", 0, !o.no_progress);
  co.progress = &progress.counter();
  ConsumerHost consumer(log, *store, dead, co);
  consumer.drain();  // it ends once the log queue stayed empty for --idle-exit (or at SIGTERM)
  const ConsumerStats cs = consumer.join();
  std::printf("consumed %llu messages: %llu records, %llu stamp patches (%llu deferred), %llu bad, into %s in %.3f s\n",
              static_cast<unsigned long long>(cs.messages), static_cast<unsigned long long>(cs.records),
              static_cast<unsigned long long>(cs.stamp_patches), static_cast<unsigned long long>(cs.deferred_patches),
              static_cast<unsigned long long>(cs.bad_messages), store->url().c_str(), double(cs.elapsed_ns) / 1e9);
  return report_failures(dead.counts(), o, dl_path);
}

}  // namespace

void add_run_commands(CLI::App& app, int& exit_code) {
  static CommonOptions o;
  static WorkerFlags run_flags, worker_flags;
  static std::string cases = "all";

  CLI::App* run = app.add_subcommand("run", "Run the seed's five cases on the embedded default (mem: queues, sqlite: store)");
  run->add_option("--case", cases, "1..5, a comma list, or all")
      ->check(CLI::Validator([](std::string& s) { return case_list_error(s); }, "CASES", "case list"))
      ->capture_default_str();
  run->footer(run_help_footer());
  add_data_options(*run, o);
  add_worker_flags(*run, WorkerCommand::run, run_flags);  // --experiment .. --store-text, --workers
  run->add_option("--queue", o.queue, "Input queue URL (case 5)")->capture_default_str();
  run->add_option("--log-queue", o.log_queue, "Log queue URL (cases 3-5)")->capture_default_str();
  run->add_option("--store", o.store, "Record store URL (default sqlite:<out>/records.db)");
  run->add_option("--object-store", o.object_store, "Where case 1 writes its CSV: file:DIR or s3://BUCKET/PREFIX (default file:<out>)");
  run->add_option("--out", o.out, "Output folder: store, summary.json, CSV, dead letters")->capture_default_str();
  run->add_flag("--allow-failures", o.allow_failures, "Exit 0 even when items failed");
  run->add_flag("--no-report", o.no_report, "Skip the analysis at the end (headline fits, <out>/report/)");
  run->add_flag("--no-progress", o.no_progress, "No progress output");
  run->callback([&exit_code] { exit_code = run_command(o, run_flags, cases); });

  CLI::App* enqueue = app.add_subcommand("enqueue", "Producer: send every record once per tokenizer to the input queue");
  add_data_options(*enqueue, o);
  enqueue->add_option("--queue", o.queue, "Input queue URL")->required();
  enqueue->add_option("--batch", o.batch, "Messages per send (a queue takes at most 10)")
      ->check(integer_in(1, static_cast<std::int64_t>(kMaxQueueBatch)))->capture_default_str();
  enqueue->add_option("--out", o.out, "Folder for the dead-letter file")->capture_default_str();
  enqueue->add_flag("--allow-failures", o.allow_failures, "Exit 0 even when lines were bad");
  enqueue->add_flag("--with-answers", o.with_answers,
                    "Carry each record's answer in its message, for workers whose --decoder sim counts it as the output length");
  enqueue->callback([&exit_code] { exit_code = enqueue_command(o); });

  CLI::App* worker = app.add_subcommand("worker", "Worker: input queue -> chat template + tokenize -> log queue");
  worker->add_option("--queue", o.queue, "Input queue URL")->required();
  worker->add_option("--log-queue", o.log_queue, "Log queue URL")->required();
  worker->add_option("--tokenizers", o.tokenizers, "Tokenizers to load (items naming others are dead-lettered)")
      ->check(name_list())->capture_default_str();
  add_worker_flags(*worker, WorkerCommand::worker, worker_flags);
  worker->add_option("--case", o.case_number, "Case number written into the records")
      ->check(integer_in(1, 5))->capture_default_str();
  worker->add_option("--name", o.name, "Worker name (default worker-<pid>)")->check(non_empty());
  worker->add_option("--idle-exit", o.idle_exit, kIdleExitHelp)
      ->check(number_in(0, kMaxIdleSeconds))->capture_default_str();
  worker->add_option("--out", o.out, "Folder for the dead-letter file")->capture_default_str();
  worker->add_flag("--allow-failures", o.allow_failures, "Exit 0 even when items failed");
  worker->add_flag("--no-progress", o.no_progress, "No progress output");
  worker->callback([&exit_code] { exit_code = worker_command(o, worker_flags); });

  CLI::App* consume = app.add_subcommand("consume", "Consumer: log queue -> record store");
  consume->add_option("--log-queue", o.log_queue, "Log queue URL")->required();
  consume->add_option("--store", o.store, "Record store URL (default sqlite:<out>/records.db)");
  consume->add_option("--out", o.out, "Folder for the store and the dead-letter file")->capture_default_str();
  consume->add_option("--idle-exit", o.idle_exit, kIdleExitHelp)
      ->check(number_in(0, kMaxIdleSeconds))->capture_default_str();
  consume->add_flag("--allow-failures", o.allow_failures, "Exit 0 even when messages were bad");
  consume->add_flag("--no-progress", o.no_progress, "No progress output");
  consume->callback([&exit_code] { exit_code = consume_command(o); });
}

}  // namespace overhead::cli
