// `overhead serve`: parses the listen address and limits, reads the auth token, and runs the
// gateway until SIGTERM or SIGINT, answering in-flight requests before it exits.
#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <thread>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "serve/bearer_auth.hpp"
#include "serve/server.hpp"

namespace overhead::cli {
namespace {

struct ServeArgs {
  std::string listen = "127.0.0.1:8000";
  std::vector<std::string> tokenizers;
  std::string auth_token_file;
  std::size_t max_body_bytes = 1u << 20;
  std::size_t max_messages = 1024;
  int read_timeout_s = 10;
  int threads = 0;
  std::int64_t max_inflight = 0;
};

int run_serve(const ServeArgs& a) {
  serve::ServerOptions o;
  const auto colon = a.listen.rfind(':');
  if (colon == std::string::npos) throw CLI::ValidationError("--listen", "expected HOST:PORT, got '" + a.listen + "'");
  o.host = a.listen.substr(0, colon);
  try {
    o.port = std::stoi(a.listen.substr(colon + 1));
  } catch (const std::exception&) {
    throw CLI::ValidationError("--listen", "the port in '" + a.listen + "' is not a number");
  }
  o.models = a.tokenizers;
  o.auth_token = serve::load_token(a.auth_token_file, "OVERHEAD_AUTH_TOKEN");
  o.max_body_bytes = a.max_body_bytes;
  o.max_messages = a.max_messages;
  o.read_timeout_s = a.read_timeout_s;
  o.write_timeout_s = a.read_timeout_s;
  o.threads = a.threads;
  o.max_inflight = a.max_inflight;

  // Block the stop signals in every thread; one thread waits for them and stops the server, so no
  // work happens inside a signal handler.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  serve::Server server(o);
  server.bind();
  std::fprintf(stderr, "overhead serve: listening on http://%s:%d%s\n", o.host.c_str(), server.bound_port(),
               o.auth_token.empty() ? "" : " (bearer auth on)");
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    std::fprintf(stderr, "overhead serve: %s, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    server.stop();
  });
  server.run();
  // run() can also end on its own (a listen error); wake the waiter so it can be joined.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand("serve", "Serve an OpenAI-compatible HTTP API (tokenize, detokenize, render, models)");
  cmd->add_option("--listen", args->listen, "HOST:PORT to listen on (loopback unless told otherwise; port 0 picks one)")
      ->capture_default_str();
  cmd->add_option("--tokenizers", args->tokenizers, "Model names to offer (short names or HF ids); default: the seed's three");
  cmd->add_option("--auth-token-file", args->auth_token_file,
                  "File whose first line is the bearer token clients must send (else $OVERHEAD_AUTH_TOKEN; unset: no auth)");
  cmd->add_option("--max-body-bytes", args->max_body_bytes, "Largest request body accepted")->capture_default_str();
  cmd->add_option("--max-messages", args->max_messages, "Most messages one request may hold")->capture_default_str();
  cmd->add_option("--read-timeout", args->read_timeout_s, "Seconds a client may take to send headers and body")
      ->capture_default_str()->check(CLI::Range(1, 3600));
  cmd->add_option("--threads", args->threads, "Connection threads (0: one per core, at least 8)")->capture_default_str();
  cmd->add_option("--max-inflight", args->max_inflight,
                  "Requests in flight past which a request gets 429 with Retry-After (0: no limit)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->callback([args, &exit_code] { exit_code = run_serve(*args); });
}

}  // namespace overhead::cli
