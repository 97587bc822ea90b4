#include "cli/worker_flags.hpp"

#include <cstdint>
#include <stdexcept>

#include "agent/answer_parser.hpp"
#include "backends/open.hpp"
#include "cli/chat_input.hpp"
#include "cli/option_checks.hpp"
#include "cost/profiles.hpp"
#include "pipe/run_id.hpp"

namespace overhead::cli {
namespace {

// The defaults and texts that differ by command: the one table. A flag of the same meaning in
// every command (--batch, --prefetch, ...) keeps its default in pipe::WorkerOptions.
struct CommandRow {
  WorkerCommand command;
  const char* experiment;
  unsigned publishers;             // 0: the synchronous publisher
  std::size_t max_decodes;         // without --max-decodes
  std::size_t max_decodes_shared;  // ... when the input queue's family is shared (a gateway can reach it)
  const char* max_decodes_help;
  const char* store_text_help;
};

constexpr CommandRow kCommands[] = {
    {WorkerCommand::run, "jmtbench", 10, 0, 0,
     "Generations in flight at once per worker (the decoder streams them; 0: one at a time on the worker's "
     "thread, as a batch run measures)",
     "Keep the decoder's generated text in each record (by default only its finish reason)"},
    {WorkerCommand::worker, "jmtbench", 10, 0, 64,
     "Generations in flight at once per worker (the decoder streams them; 0: one at a time on the worker's "
     "thread, as a batch run measures). Default: 64 over a shared --queue (sqlite-queue:, redis://, sqs://), so "
     "that a gateway's streams arrive as deltas; 0 over mem:",
     "Keep the decoder's generated text in each record (by default only its finish reason)"},
    {WorkerCommand::serve, "serve", 0, 64, 64,
     "Generations in flight at once in this process's workers (the decoder streams them; 0: one at a time)",
     "Keep each answer's generated text in its stored record (by default only its finish reason)"},
};

const CommandRow& row_of(WorkerCommand command) {
  for (const auto& r : kCommands)
    if (r.command == command) return r;
  throw std::logic_error("a worker command without its row of defaults");
}

// The accepted ranges: the upper bounds only catch typing slips, far above anything useful.
constexpr std::int64_t kMaxThreads = 256;
constexpr std::int64_t kMaxInFlight = 1'000'000;
constexpr std::int64_t kMaxPromptBytesBound = std::int64_t{1} << 32;
constexpr std::int64_t kMaxServeWorkers = 64;

constexpr const char* kDecoderForms =
    "openai:URL[,model=NAME][,timeout_ms=MS][,api_key_env=VAR] (an OpenAI-compatible server; its API key read from the "
    "environment variable VAR)";

// --decoder: a form backends::open_decoder accepts (checked without opening it: the command opens it
// once, after the stop signals are blocked); its error names the bad part (exit 2).
CLI::Validator decoder_validator() {
  return CLI::Validator(
      [](std::string& s) {
        try {
          backends::check_decoder(s);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "DECODER", "decoder");
}

// Every command's: the prices of each record (cost/request_price.hpp). The engine's flags are
// those of `overhead cost` and `simulate` (--engine-profile, or --gpu and --model), so that the
// same words price a workload there and each of its requests here.
void add_price_flags(CLI::App& cmd, cost::RequestPriceSpec& p) {
  const std::string group = "Price (each record's cost_usd = E + D, docs/cost-model.md)";
  p.engine.profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  cmd.add_option("--price-instance", p.cpu_instance,
                 "E: the worker's instance preset (data/profiles/price/prices.json): its $/h over its vCPUs, per "
                 "vCPU-second of the item's CPU time")->group(group);
  cmd.add_option("--price-cpu-usd-per-hour", p.cpu_usd_per_vcpu_hour,
                 "E: $ per vCPU-hour of the item's CPU time, typed in (instead of --price-instance)")
      ->check(number_in(0, 1e6))->group(group);
  cmd.add_option("--price-gpu-usd-per-hour", p.engine.gpu_usd_per_hour,
                 "D: $ per hour of one GPU (default with --gpu: its preset); alone, D is the item's measured share of "
                 "the engine's time")->check(number_in(0, 1e6))->group(group);
  cmd.add_option("--gpu", p.engine.gpu, "D: the GPU profile, as `overhead cost --gpu` (with --model: D from the server model)")
      ->group(group);
  cmd.add_option("--model", p.engine.model, "D: the model profile served, as `overhead cost --model`")->group(group);
  cmd.add_option("--engine-profile", p.engine.engine_profile,
                 "D: `overhead calibrate`'s profile of the engine, in place of --gpu and --model (price from "
                 "--price-gpu-usd-per-hour)")->group(group);
  cmd.add_option("--price-workload", p.reference_workload,
                 "D with a profile: the request shape in=N,out=M whose capacity sets the rates per token (default: "
                 "the mean of the requests priced so far)")->group(group);
}

// `run` and `worker`: the batch worker's flags.
// "none, hermes, ..." and a check that a name is one of them.
std::string parser_choices(bool reasoning) {
  std::string out = "none";
  for (const auto n : reasoning ? agent::reasoning_parser_names() : agent::tool_parser_names()) out += ", " + std::string(n);
  return out;
}
CLI::Validator parser_validator(bool reasoning) {
  return CLI::Validator(
      [reasoning](std::string& name) -> std::string {
        const bool known = name == "none" || (reasoning ? agent::is_reasoning_parser(name) : agent::is_tool_parser(name));
        return known ? std::string() : "'" + name + "' is not one of " + parser_choices(reasoning);
      },
      "NAME");
}

void add_batch_worker_flags(CLI::App& cmd, const CommandRow& row, WorkerFlags& f) {
  pipe::WorkerOptions& w = f.host.worker;
  cmd.add_option("--experiment", w.experiment, "Experiment name: run writes NAME-caseN, one per case; worker writes NAME as given")
      ->check(non_empty())
      ->capture_default_str();
  cmd.add_option("--batch", w.batch, "Items per input batch (a queue takes at most 10)")
      ->check(integer_in(1, static_cast<std::int64_t>(ports::kMaxQueueBatch)))->capture_default_str();
  cmd.add_option("--publishers", w.publishers, "Threads of the asynchronous log publisher")
      ->check(integer_in(1, kMaxThreads))->capture_default_str();
  cmd.add_option("--prefetch", f.prefetch, "Receive the next batch while processing this one")
      ->check(CLI::IsMember({"on", "off"}))->capture_default_str();
  cmd.add_option("--max-prompt-bytes", w.max_prompt_bytes,
                 "Dead-letter prompts larger than this (0 = no limit; the default is far above any chat prompt)")
      ->check(integer_in(0, kMaxPromptBytesBound))
      ->capture_default_str();
  cmd.add_option("--max-in-flight", w.max_in_flight, "Items received but not settled (0 = 4 x batch)")
      ->check(integer_in(0, kMaxInFlight));
  cmd.add_option("--date", f.date, "Pin strftime_now in chat templates (YYYY-MM-DD)")->check(date_validator());
  cmd.add_option("--run-id", f.run_id,
                 "Run id written into every record (default: a new one, UTC time + random suffix; give workers "
                 "of one deployment the same)")
      ->check(CLI::Validator([](std::string& s) { return pipe::run_id_error(s); }, "ID", "run id"));
  cmd.add_option("--decoder", f.decoder,
                 std::string("Decoder stage after render+encode (docs/pipeline.md): none, sim:prefill=TOK_S,decode=TOK_S[,ttft_ms=MS] "
                             "(waits the modelled D), or ") + kDecoderForms)
      ->check(decoder_validator())
      ->capture_default_str();
  f.max_decodes = cmd.add_option("--max-decodes", w.max_decodes, row.max_decodes_help)->check(integer_in(0, kMaxInFlight));
  // `worker`'s default depends on its queue (the help says which); the others show theirs.
  if (row.max_decodes == row.max_decodes_shared) f.max_decodes->capture_default_str();
  cmd.add_flag("--store-text", w.store_text, row.store_text_help);
  // What the record counts of an answer's tool calls and reasoning; a gateway in front gives the
  // same to its own (serve's flags of the same names).
  cmd.add_option("--tool-parser", f.tool_parser,
                 "How the record counts an answer's tool calls (tool_calls): " + parser_choices(false) +
                     " (default: what the model's chat template writes)")
      ->check(parser_validator(false));
  cmd.add_option("--reasoning-parser", f.reasoning_parser,
                 "How the record counts an answer's reasoning (reasoning_tokens): " + parser_choices(true) +
                     " (default: what the model's chat template writes)")
      ->check(parser_validator(true));
  if (row.command == WorkerCommand::run)
    cmd.add_option("--workers", f.host.threads, "Worker threads per case (the seed had one)")
        ->check(integer_in(1, kMaxThreads))->capture_default_str();
  add_price_flags(cmd, f.price);
}

// `serve`: the in-process workers' flags (--tool-parser and --reasoning-parser are serve's own,
// given to its workers by serve::Server).
void add_serve_worker_flags(CLI::App& cmd, const CommandRow& row, WorkerFlags& f) {
  pipe::WorkerOptions& w = f.host.worker;
  cmd.add_option("--workers", f.host.threads,
                 "In-process workers taking chat requests off the input queue (0: none; `overhead worker` and "
                 "`overhead consume` processes on the same broker do the work)")
      ->capture_default_str()->check(integer_in(0, kMaxServeWorkers));
  cmd.add_option("--decoder", f.decoder,
                 std::string("Decoder stage after render+encode: none (no generation: empty answer, 0 completion tokens, "
                             "finish_reason length), sim:prefill=TOK_S,decode=TOK_S[,ttft_ms=MS] (waits the modelled D; "
                             "completion_tokens = max_tokens), or ") + kDecoderForms)
      ->capture_default_str();
  f.max_decodes = cmd.add_option("--max-decodes", w.max_decodes, row.max_decodes_help)
                      ->capture_default_str()->check(CLI::Range(0, 1000000));
  cmd.add_flag("--store-text", w.store_text, row.store_text_help);
  add_price_flags(cmd, f.price);
}

}  // namespace

void add_worker_flags(CLI::App& cmd, WorkerCommand command, WorkerFlags& flags) {
  const CommandRow& row = row_of(command);
  flags.command = command;
  flags.host.worker.experiment = row.experiment;
  flags.host.worker.publishers = row.publishers;
  flags.host.worker.max_decodes = row.max_decodes;
  if (command == WorkerCommand::serve)
    add_serve_worker_flags(cmd, row, flags);
  else
    add_batch_worker_flags(cmd, row, flags);
}

pipe::WorkerHostOptions worker_host_options(const WorkerFlags& flags, bool shared_queue) {
  const CommandRow& row = row_of(flags.command);
  pipe::WorkerHostOptions h = flags.host;
  pipe::WorkerOptions& w = h.worker;
  if (shared_queue && !(flags.max_decodes && flags.max_decodes->count() > 0)) w.max_decodes = row.max_decodes_shared;
  w.prefetch = flags.prefetch == "on";
  if (flags.command != WorkerCommand::serve) w.run_id = flags.run_id.empty() ? pipe::new_run_id() : flags.run_id;
  if (!flags.date.empty()) h.date = flags.date;
  if (!flags.tool_parser.empty()) w.answer_parsers.tool_parser = flags.tool_parser;
  if (!flags.reasoning_parser.empty()) w.answer_parsers.reasoning_parser = flags.reasoning_parser;
  try {
    w.decoder = backends::open_decoder(flags.decoder);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--decoder", e.what());
  }
  if (flags.price.any()) {
    try {
      w.pricer = std::make_shared<const cost::RequestPricer>(cost::find_request_prices(flags.price));
    } catch (const cost::CostError& e) {
      throw CLI::ValidationError("price", e.what());
    }
    w.engine_share = std::make_shared<pipe::EngineShare>();  // the process's workers share the engine
  }
  return h;
}

}  // namespace overhead::cli
