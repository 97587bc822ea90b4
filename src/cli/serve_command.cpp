// `overhead serve`: parses the listen address and limits, reads the auth token, opens the
// pipeline's queues and store, and runs the gateway until SIGTERM or SIGINT, answering in-flight
// requests (up to --shutdown-timeout) before it exits 0.
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <pthread.h>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "backends/open.hpp"
#include "backends/queue_schemes.hpp"
#include "backends/redis_rate_limiter.hpp"
#include "ports/backend_url.hpp"
#include "ports/errors.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "cli/worker_flags.hpp"
#include "serve/bearer_auth.hpp"
#include "serve/server.hpp"
#include "util/hash.hpp"

namespace overhead::cli {
namespace {

// What `overhead serve` is told. The server's own options are bound straight into the
// ServerOptions the server reads (their defaults are the server's), the in-process workers' into
// the worker flags (cli/worker_flags.hpp, then ServerOptions::workers); the rest are what this
// command turns into parts of it (the listen address, the token file, the URLs it opens, seconds).
struct ServeArgs {
  serve::ServerOptions server;
  WorkerFlags worker;
  std::string listen = "127.0.0.1:8000";
  std::string auth_token_file;
  std::string queue = "mem:";
  std::string log_queue = "mem:";
  std::string store;
  std::string out = "out";
  double request_timeout_s = 30;
  double first_token_timeout_s = 30;
  double stream_idle_timeout_s = 30;
  double stream_timeout_s = 600;
  double shutdown_timeout_s = 10;
  std::string reply_queue;  // empty: <input name>-reply-<host>-<pid> over a shared queue
  std::string file_store;   // the Batch API's files; empty: file:<out>/files
  std::string special_tokens_in_content = "refuse";
  std::string tool_parser;       // empty: unset (the template's)
  std::string reasoning_parser;  // empty: unset (the template's)
  bool api_keys = false;         // authenticate with the keys in the store (overhead keys)
  std::string limits;            // empty: in-process counters; redis://...: shared by every gateway
  std::string limits_on_error = "open";
  double key_refresh_s = 2;
  std::int64_t batch_lease_s = 10;
  double spend_refresh_s = 5;
  double limit_window_s = 60;
};

// Upper bounds of the size and count options: far above anything useful, they catch typing slips
// (and "-1" typed into an unsigned option) before the server starts.
constexpr std::int64_t kMaxBodyBytes = std::int64_t{1} << 30;
constexpr std::int64_t kMaxCount = 1'000'000'000;
constexpr std::int64_t kMaxThreads = 1024;

// Over a shared input queue (anything but mem:) the gateway answers through a reply queue of its
// own, a sibling of the input queue that every work item names, so that any worker on the broker
// can answer it (backends/queue_siblings.hpp). Over mem: the workers are in this process.
void open_reply_path(const ServeArgs& a, serve::PipelineBackends& b) {
  const auto family = backends::open_queue_family(a.queue);  // the scheme is known: --queue opened
  if (!family->shared()) {
    if (a.server.workers.threads == 0)
      throw CLI::ValidationError("--workers", "0 needs a shared --queue (" + backends::shared_queue_prefixes() +
                                                  "): over " + ports::parse_backend_url(a.queue).scheme +
                                                  ": only this process can work");
    if (!a.reply_queue.empty()) throw CLI::ValidationError("--reply-queue", "needs a shared --queue (over mem: the workers answer in-process)");
    return;
  }
  try {
    if (a.reply_queue.empty()) {
      b.reply_name = family->own_sibling_name(ports::SiblingRole::reply);
    } else {
      b.reply_name = a.reply_queue;
      if (!family->is_sibling(ports::SiblingRole::reply, b.reply_name))
        throw std::invalid_argument("\"" + b.reply_name + "\" is not a reply queue name of the input queue: it must read \"" +
                                    family->name() + "-reply-SUFFIX\" (A-Z a-z 0-9 _ -, at most 80 characters)");
    }
    b.replies = family->open(b.reply_name);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--reply-queue", e.what());
  }
  // The in-process workers answer, and cancels go to the control queue a remote worker named,
  // in the same family (only to names of those shapes).
  b.family = family;
}

// The Batch API (serve/batch_runner.hpp): its state in the record store's database, its files in
// the object store, its items on the batch lane beside the input queue ("<input>-batch-lane", read
// by every worker of the input queue), or an in-process lane over mem:.
void open_batches(const ServeArgs& a, serve::ServerOptions& o, const std::string& store_url) {
  // A routing-only gateway reads the batches' records where its workers' consumers store them:
  // it must be told that store, and makes none of its own.
  if (a.worker.host.threads == 0 && a.store.empty()) {
    std::fprintf(stderr, "overhead serve: no Batch API: with --workers 0 give --store, the store the consumers write\n");
    return;
  }
  // A store whose batch tables cannot be opened (a DynamoDB table without its TABLE-batches and
  // without create=1, a server down at start) leaves the gateway serving all else, as before batches
  // were kept there; the message says why and how to make the table.
  try {
    o.batches.state = backends::open_batch_store(store_url);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "overhead serve: no Batch API: %s\n", e.what());
    return;
  } catch (const ports::StoreError& e) {
    std::fprintf(stderr, "overhead serve: no Batch API: %s\n", e.what());
    return;
  }
  if (!o.pipeline.store) o.pipeline.store = std::shared_ptr<ports::Store>(backends::open_store(store_url));
  o.batches.records = o.pipeline.store;
  const std::string files = a.file_store.empty() ? "file:" + (std::filesystem::path(a.out) / "files").string() : a.file_store;
  try {
    o.batches.files = backends::open_object_store(files);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--file-store", e.what());
  }
  const auto family = backends::open_queue_family(a.queue);
  o.pipeline.batch_lane = family->shared() ? family->open(family->batch_lane_name()) : backends::open_queue("mem:");
  o.batches.lane_durable = family->shared();
  // Its name among the gateways of one store (batch leases): the same host and --out give the same
  // name, so a gateway started again takes its batches back at once.
  char host[256] = {};
  (void)gethostname(host, sizeof host - 1);
  std::error_code ec;
  const auto out = std::filesystem::absolute(a.out, ec);
  o.batches.driver = "gateway-" + util::text_digest(std::string(host) + "\n" + (ec ? a.out : out.string()));
}

template <class Open>
auto open_option(const char* option, const std::string& url, Open open) {
  try {
    return open(url);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError(option, e.what());
  }
}

int run_serve(ServeArgs& a) {
  serve::ServerOptions& o = a.server;
  // Block the stop signals in every thread; one thread waits for them and stops the server, so no
  // work happens inside a signal handler. First of all: a thread inherits the mask it is started
  // with, and opening the backends starts threads (the openai decoder's loop); one started before
  // would take SIGTERM with its default action and kill the process mid-answer.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const auto colon = a.listen.rfind(':');
  if (colon == std::string::npos) throw CLI::ValidationError("--listen", "expected HOST:PORT, got '" + a.listen + "'");
  o.host = a.listen.substr(0, colon);
  // The port whole and in range: std::stoi alone took "80abc" as 80 and passed 99999 or -1 on to
  // the bind, whose error then named neither the option nor the range.
  const std::string port = a.listen.substr(colon + 1);
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) > 65535)
    throw CLI::ValidationError("--listen", "the port in '" + a.listen + "' must be a number in 0..65535");
  o.port = std::stoi(port);
  o.auth_token = serve::load_token(a.auth_token_file, "OVERHEAD_AUTH_TOKEN");
  o.special_tokens_in_content = *serve::special_tokens_policy(a.special_tokens_in_content);  // checked by IsMember
  if (!a.tool_parser.empty()) o.parsers.tool_parser = a.tool_parser;
  if (!a.reasoning_parser.empty()) o.parsers.reasoning_parser = a.reasoning_parser;
  // Each flag alone, then the pair (the harmony reasoning parser reads only its own tool family).
  const auto check = [](const char* flag, const serve::ParserOverrides& p) {
    try {
      serve::check_parser_overrides(p);
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError(flag, e.what());
    }
  };
  check("--tool-parser", {o.parsers.tool_parser, std::nullopt});
  check("--reasoning-parser", {std::nullopt, o.parsers.reasoning_parser});
  check("--reasoning-parser", o.parsers);
  o.write_timeout_s = o.read_timeout_s;  // one --read-timeout bounds both directions
  const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000)); };
  o.request_timeout = ms(a.request_timeout_s);
  o.first_token_timeout = ms(a.first_token_timeout_s);
  o.stream_idle_timeout = ms(a.stream_idle_timeout_s);
  o.stream_timeout = ms(a.stream_timeout_s);
  std::filesystem::create_directories(a.out);
  const std::string store_url = a.store.empty() ? "sqlite:" + (std::filesystem::path(a.out) / "serve.db").string() : a.store;
  o.pipeline.input = open_option("--queue", a.queue, [](const std::string& u) { return backends::open_queue(u); });
  o.pipeline.log = open_option("--log-queue", a.log_queue, [](const std::string& u) { return backends::open_queue(u); });
  // A gateway without workers of its own stores nothing (its workers' consumers do): no store is
  // opened, and none is made on disk.
  if (a.worker.host.threads > 0)
    o.pipeline.store = open_option("--store", store_url, [](const std::string& u) { return std::shared_ptr<ports::Store>(backends::open_store(u)); });
  // With --workers 0 and --store, the store is opened for the Batch API alone (open_batches):
  // the records are written by the workers' `overhead consume`.
  if (a.api_keys) {
    // The keys live beside the records (the same URL as --store): a gateway that stores nothing
    // itself (--workers 0) must still be told where that is.
    if (a.worker.host.threads == 0 && a.store.empty())
      throw CLI::ValidationError("--api-keys", "with --workers 0, give --store: the key store is the records' store of your consumers");
    o.keys = open_option("--store", store_url, [](const std::string& u) {
      return std::shared_ptr<ports::KeyStore>(backends::open_key_store(u, backends::Access::create));
    });
  }
  if (!a.limits.empty()) {
    if (!a.api_keys) throw CLI::ValidationError("--limits", "limits are per key: give --api-keys too");
    o.limiter = open_option("--limits", a.limits, [&](const std::string& u) { return backends::open_rate_limiter(u, ms(a.limit_window_s)); });
  }
  o.limits_fail_closed = a.limits_on_error == "closed";  // checked by IsMember
  o.key_refresh = ms(a.key_refresh_s);
  o.batch_limits.lease = std::chrono::seconds(a.batch_lease_s);
  o.spend_refresh = ms(a.spend_refresh_s);
  o.limit_window = ms(a.limit_window_s);
  o.dead_letter_path = (std::filesystem::path(a.out) / "dead_letters_serve.jsonl").string();
  o.workers = worker_host_options(a.worker);  // the decoder opened
  open_reply_path(a, o.pipeline);
  open_batches(a, o, store_url);

  serve::Server server(o);
  server.bind();
  std::fprintf(stderr, "overhead serve: listening on http://%s:%d%s (queue %s, store %s, decoder %s%s%s)\n", o.host.c_str(),
               server.bound_port(), o.keys ? " (API keys on)" : o.auth_token.empty() ? "" : " (bearer auth on)", o.pipeline.input->url().c_str(),
               o.pipeline.store ? o.pipeline.store->url().c_str() : "none", o.workers.worker.decoder ? o.workers.worker.decoder->describe().c_str() : "none",
               o.pipeline.replies ? ", replies on " : "", o.pipeline.replies ? o.pipeline.replies->url().c_str() : "");
  const auto shutdown_budget = std::chrono::milliseconds(static_cast<std::int64_t>(a.shutdown_timeout_s * 1000));
  // The exit is bounded: past the deadline the workers get 1 s to finish what they hold and the
  // store 5 s to take the last records (serve/server.cpp, serve/chat_pipeline.cpp); a process
  // still not done then (a connection or a decoder that does not let go) ends here.
  constexpr auto kExitGrace = std::chrono::seconds(8);
  std::mutex exit_mutex;
  std::condition_variable exit_cv;
  bool exited = false;
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "overhead serve: %s, finishing requests in flight (up to %.1f s)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT",
                 a.shutdown_timeout_s);
    const auto deadline = std::chrono::steady_clock::now() + shutdown_budget;
    server.shutdown(deadline);
    std::unique_lock lock(exit_mutex);
    if (!exit_cv.wait_until(lock, deadline + kExitGrace, [&] { return exited; })) {
      std::fprintf(stderr, "overhead serve: still not stopped %.1f s past --shutdown-timeout; exiting now\n",
                   std::chrono::duration<double>(kExitGrace).count());
      std::_Exit(1);
    }
  });
  server.run();
  {
    std::lock_guard lock(exit_mutex);
    exited = true;
  }
  exit_cv.notify_all();
  // run() can also end on its own (a listen error); wake the waiter so it can be joined.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  std::fprintf(stderr, "overhead serve: stopped\n");
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve an OpenAI-compatible HTTP API (chat completions over the pipeline, tokenize, detokenize, render, models)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (loopback unless told otherwise; port 0 picks one)")
      ->capture_default_str();
  cmd->add_option("--tokenizers", args->server.models, "Model names to offer (short names or HF ids); default: the seed's three");
  cmd->add_option("--auth-token-file", args->auth_token_file,
                  "File whose first line is the bearer token clients must send (else $OVERHEAD_AUTH_TOKEN; unset: no auth)");
  cmd->add_flag("--api-keys", args->api_keys,
               "Authenticate with the API keys in the store (overhead keys create --store URL): each key's rpm, tpm, budget and models apply");
  cmd->add_option("--limits", args->limits,
                  "redis://HOST:PORT[/PREFIX]: keep the keys' rate counters in Redis, shared by every gateway (default: in this process)");
  cmd->add_option("--limits-on-error", args->limits_on_error,
                  "When the --limits Redis does not answer: open admits the request (counted in /metrics), closed refuses it with 503")
      ->capture_default_str()->check(CLI::IsMember({"open", "closed"}));
  cmd->add_option("--key-refresh", args->key_refresh_s,
                  "Seconds between reads of the keys and their spend from the store: a revoked key is refused within this on every gateway")
      ->capture_default_str()->check(CLI::Range(0.05, 3600.0));
  cmd->add_option("--spend-refresh", args->spend_refresh_s,
                  "Seconds between sums of the keys' spend from the store while a key has a budget (a scan of the records on DynamoDB)")
      ->capture_default_str()->check(CLI::Range(0.05, 86400.0));
  cmd->add_option("--limit-window", args->limit_window_s, "Seconds of the sliding window of the rpm/tpm counters (60; shorter holds the rate over shorter spans, with a smaller burst)")
      ->capture_default_str()->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--max-body-bytes", args->server.max_body_bytes, "Largest request body accepted")
      ->capture_default_str()->check(integer_in(1, kMaxBodyBytes));
  cmd->add_option("--max-messages", args->server.max_messages, "Most messages one request may hold")
      ->capture_default_str()->check(integer_in(1, kMaxCount));
  cmd->add_option("--read-timeout", args->server.read_timeout_s,
                  "Seconds a client may take to send a request's headers and body, from its first byte (one deadline for the whole request)")
      ->capture_default_str()->check(integer_in(1, 3600));
  cmd->add_option("--threads", args->server.threads,
                  "Handler threads running the routes (0: one per core, at least 8); connections take none, idle or not")
      ->capture_default_str()->check(integer_in(0, kMaxThreads));
  cmd->add_option("--io-threads", args->server.io_threads, "Event-loop threads owning the connections (0: one per core, at most 4)")
      ->capture_default_str()->check(integer_in(0, 64));
  cmd->add_option("--idle-timeout", args->server.idle_timeout_s, "Seconds a kept-alive connection may wait for its next request")
      ->capture_default_str()->check(integer_in(1, 3600));
  cmd->add_option("--max-pending-connections", args->server.max_waiting_requests,
                  "Requests read and waiting for a free handler thread past which a request gets 503 with Retry-After")
      ->capture_default_str()->check(integer_in(1, kMaxCount));
  cmd->add_option("--max-inflight", args->server.max_inflight,
                  "Requests in flight past which a request gets 429 with Retry-After (0: no limit)")
      ->capture_default_str()->check(integer_in(0, kMaxCount));
  cmd->add_option("--queue", args->queue, "Input queue URL the gateway sends chat requests to (mem: = in-process)")->capture_default_str();
  cmd->add_option("--log-queue", args->log_queue, "Log queue URL from the workers to the consumer")->capture_default_str();
  cmd->add_option("--store", args->store, "Record store URL (default sqlite:<out>/serve.db)");
  cmd->add_option("--out", args->out, "Folder for the default store and the dead letters")->capture_default_str();
  args->worker.host = args->server.workers;  // the gateway's worker defaults
  add_worker_flags(*cmd, WorkerCommand::serve, args->worker);  // --workers, --decoder, --max-decodes, --store-text
  cmd->add_option("--file-store", args->file_store,
                  "Object store URL of the Batch API's files, uploads and outputs (default file:<out>/files; s3://BUCKET/PREFIX)");
  cmd->add_option("--max-file-bytes", args->server.batch_limits.max_file_bytes, "Largest file POST /v1/files accepts")
      ->capture_default_str()->check(integer_in(1, kMaxBodyBytes * 16));
  cmd->add_option("--max-part-bytes", args->server.upload_limits.max_part_bytes,
                  "Largest part POST /v1/uploads/{id}/parts accepts (a file past --max-file-bytes is sent as parts)")
      ->capture_default_str()->check(integer_in(1, kMaxBodyBytes * 16));
  cmd->add_option("--max-upload-bytes", args->server.upload_limits.max_upload_bytes,
                  "Largest file POST /v1/uploads may announce, its parts put together")
      ->capture_default_str()->check(integer_in(1, std::int64_t{1} << 40));
  cmd->add_option("--max-batch-lines", args->server.batch_limits.max_lines, "Most requests one batch may hold")
      ->capture_default_str()->check(integer_in(1, kMaxCount));
  cmd->add_option("--batch-lane-window", args->server.batch_limits.lane_window,
                  "Items waiting in the batch lane past which a batch's next lines wait for the workers to take some")
      ->capture_default_str()->check(integer_in(200, 1000000));
  cmd->add_option("--max-open-batches", args->server.batch_limits.max_open_batches,
                  "Batches not yet finished past which POST /v1/batches gets 429")
      ->capture_default_str()->check(integer_in(1, 100000));
  cmd->add_option("--batch-lease", args->batch_lease_s,
                  "Seconds a batch's driving gateway may go without renewing its lease before another gateway on the "
                  "store takes the batch over")
      ->capture_default_str()->check(integer_in(3, 3600));
  cmd->add_option("--reply-queue", args->reply_queue,
                  "Over a shared --queue: the name of this gateway's reply queue, INPUT-reply-SUFFIX (default "
                  "INPUT-reply-<host>-<pid>); workers answer there");
  cmd->add_option("--request-timeout", args->request_timeout_s,
                  "Seconds a chat request without `stream` (synchronous, or on /v1/requests) waits for its worker's whole answer "
                  "(then 504, or status failed)")
      ->capture_default_str()->check(number_in(0.001, 3600));
  cmd->add_option("--first-token-timeout", args->first_token_timeout_s,
                  "Seconds a streamed chat request waits for its first text (then a plain 504)")
      ->capture_default_str()->check(number_in(0.001, 3600));
  cmd->add_option("--stream-idle-timeout", args->stream_idle_timeout_s,
                  "Seconds a stream may wait for its next text once it began (then an error event; a stream that keeps "
                  "receiving text is never cut by it)")
      ->capture_default_str()->check(number_in(0.001, 3600));
  cmd->add_option("--stream-timeout", args->stream_timeout_s, "Seconds a whole stream may last, however steadily it receives text")
      ->capture_default_str()->check(number_in(0.001, 7 * 24 * 3600));
  cmd->add_option("--shutdown-timeout", args->shutdown_timeout_s, "Seconds SIGTERM waits for requests in flight before answering 503")
      ->capture_default_str()->check(number_in(0, 3600));
  cmd->add_option("--max-kept-bytes", args->server.max_kept_bytes,
                  "Bytes of finished asynchronous answers kept for GET /v1/requests/{id} (also at most 10,000 answers); "
                  "past it the oldest are dropped and asking for one gives 410")
      ->capture_default_str()->check(integer_in(1, kMaxBodyBytes * 1024));
  cmd->add_option("--max-queued", args->server.max_queued, "Chat requests awaiting a worker past which a request gets 429 with Retry-After")
      ->capture_default_str()->check(integer_in(1, kMaxCount));
  cmd->add_option("--max-log-backlog", args->server.max_log_backlog,
                  "Records awaiting the consumer (the log queue's depth) past which a chat request gets 429 with "
                  "Retry-After, so a slow store cannot grow the backlog without bound (0: no limit)")
      ->capture_default_str()->check(integer_in(0, kMaxCount));
  cmd->add_option("--special-tokens-in-content", args->special_tokens_in_content,
                  "Special-token text (e.g. <|im_start|>) in a chat request's messages or tools: refuse (400, "
                  "code special_token_in_content, counted in /metrics as overhead_special_token_refusals_total), so "
                  "no client can write control tokens into its prompt; or allow (parsed as the tokens, as HF and vLLM do)")
      ->capture_default_str()->check(CLI::IsMember({"refuse", "allow"}));
  cmd->add_option("--tool-parser", args->tool_parser,
                  "How tool calls are read from a model's answer into message.tool_calls: " + serve::parser_names(false) +
                      " (default: chosen per model from its chat template; none: the answer is all content)");
  cmd->add_option("--reasoning-parser", args->reasoning_parser,
                  "How reasoning is read from a model's answer into message.reasoning_content: " + serve::parser_names(true) +
                      " (default: chosen per model from its chat template)");
  cmd->callback([args, &exit_code] { exit_code = run_serve(*args); });
}

}  // namespace overhead::cli
