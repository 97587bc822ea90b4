// The gateway: the HTTP server (http/http_server.hpp) with the gateway's routes registered, and
// what every request passes through (bearer auth, the in-flight limit, OpenAI-shaped errors, the
// metrics). The routes themselves live in their own files (token_routes.*, chat_routes.*,
// dashboard_routes.*).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pipe/worker_host.hpp"
#include "ports/key_store.hpp"
#include "ports/rate_limiter.hpp"
#include "serve/answer_shape.hpp"
#include "serve/batch_runner.hpp"
#include "serve/batch_uploads.hpp"
#include "serve/chat_pipeline.hpp"
#include "serve/special_tokens_guard.hpp"

namespace overhead::serve {

namespace http {
class Gatekeeper;
class HttpServer;
class Routes;
}  // namespace http

class ApiKeys;
class BindingCache;
class KeyAdmission;
class KeyMetrics;
class KeySpend;
class PeriodicMemoryTrim;
class Metrics;
class ReplyBox;

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless told otherwise
  int port = 0;                    // 0: any free port (bound_port() tells which)
  std::vector<std::string> models; // empty: the seed's tokenizers
  std::string auth_token;          // empty: no single token (the key named "default", api_keys.hpp)
  // Keys, limits and budgets (--api-keys, key_admission.hpp): the keys in the store (null: only
  // auth_token, if any), the shared counters (null: in-process, windows of limit_window), what an
  // unreachable limiter means, how often keys and spend are read again, and how many keys get
  // their own /metrics label.
  std::shared_ptr<ports::KeyStore> keys;
  std::shared_ptr<ports::RateLimiter> limiter;
  bool limits_fail_closed = false;
  std::chrono::milliseconds limit_window{60000};
  std::chrono::milliseconds key_refresh{2000};
  // How often the keys' spend is summed from the store while any key has a budget: a GROUP BY on
  // SQLite and PostgreSQL, a scan of the records table on DynamoDB (raise it there).
  std::chrono::milliseconds spend_refresh{5000};
  std::size_t max_key_metrics = 100;
  std::size_t max_body_bytes = 1u << 20;
  std::size_t max_messages = 1024;
  // Slow-client protection: a request's headers and body must all arrive within this many seconds
  // of its first byte (one deadline for the whole request, not one per read).
  int read_timeout_s = 10;
  int write_timeout_s = 10;
  // A kept-alive connection waiting for its next request closes after this many seconds. An idle
  // connection costs no thread, so this can outlast the idle timeout of the clients' pools and
  // load balancers in front (AWS ALB: 60 s).
  int idle_timeout_s = 75;
  int threads = 0;     // handler threads running the routes (0: one per core, at least 8)
  int io_threads = 0;  // event-loop threads owning the connections (0: one per core, at most 4)
  // Requests read and waiting for a free handler thread past which a request gets 503 with
  // Retry-After: memory held by requests read ahead of the handlers stays bounded.
  std::size_t max_waiting_requests = 1024;
  // How often freed heap memory is given back to the system (heap_policy.hpp); 0: never.
  std::chrono::milliseconds memory_trim_interval{5000};
  // Overload: past this many requests in flight a request gets 429 with Retry-After (0: no limit).
  std::int64_t max_inflight = 0;
  int retry_after_s = 1;

  // The pipeline behind /v1/chat/completions and /v1/requests (opened by the caller). Without an
  // input queue those routes are not served; the token routes need none.
  PipelineBackends pipeline;
  // The in-process workers (pipe/worker_host.hpp): `threads` of them (0: none, only with a reply
  // queue; `overhead worker` processes on the broker do the work), with every worker setting
  // (worker.decoder, worker.max_decodes, worker.store_text, ...). Their tokenizers are `models`.
  pipe::WorkerHostOptions workers = gateway_workers();
  std::string dead_letter_path;  // empty: dead letters are counted in memory only
  std::chrono::milliseconds request_timeout{30000};      // a synchronous or asynchronous answer's wait
  std::chrono::milliseconds first_token_timeout{30000};  // a stream's wait for its first text
  std::chrono::milliseconds stream_idle_timeout{30000};  // a stream's longest gap between two pieces of text
  std::chrono::milliseconds stream_timeout{600000};      // a stream's whole length
  std::size_t max_queued = 1024;  // requests awaiting a worker's reply past which 429
  // Finished asynchronous answers kept for GET /v1/requests/{id}: at most this many bytes (and
  // 10,000 answers); past it the oldest are dropped and asking for one is a 410.
  std::size_t max_kept_bytes = std::size_t{256} << 20;
  std::size_t max_log_backlog = 20000;  // records awaiting the consumer past which 429 (chat_routes.hpp); 0: none
  // Special-token text in a chat request's messages (--special-tokens-in-content, special_tokens_guard.hpp).
  SpecialTokensInContent special_tokens_in_content = SpecialTokensInContent::kRefuse;
  // The answer's tool-call and reasoning parsers (--tool-parser, --reasoning-parser): unset, each
  // model's chat template chooses (agent/detect.hpp); "none" parses nothing of that kind. Checked
  // with check_parser_overrides (answer_shape.hpp).
  ParserOverrides parsers;

  // The Batch API (batch_routes.hpp, batch_runner.hpp): served when `batches.state` is set and the
  // pipeline has its batch lane (pipeline.batch_lane, which the runner sends to).
  BatchBackends batches;
  BatchLimits batch_limits;
  UploadLimits upload_limits;  // the Uploads API's (batch_uploads.hpp), served beside the batches

  // The gateway's worker defaults (the same as `overhead serve`'s, cli/worker_flags.cpp): one
  // worker, records under experiment "serve", 64 generations in flight so that streams arrive as
  // deltas.
  static pipe::WorkerHostOptions gateway_workers() {
    pipe::WorkerHostOptions h;
    h.worker.name = "serve-worker-0";
    h.worker.experiment = "serve";
    h.worker.max_decodes = 64;
    return h;
  }
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; throws std::runtime_error naming host:port when it cannot.
  void bind();
  [[nodiscard]] int bound_port() const { return port_; }
  // Serves until stop() or shutdown(); returns when in-flight requests have been answered and
  // the pipeline has stopped (its queued items taken until the shutdown deadline, its records
  // stored).
  void run();
  // Stops accepting and makes run() return; safe from another thread. Queued asynchronous items
  // get 10 s to be taken up.
  void stop();
  // Graceful shutdown, from another thread: stops accepting; requests in flight are answered
  // until `deadline`, and those still waiting for a worker then get 503. Returns when the HTTP
  // side has finished or at the deadline.
  void shutdown(std::chrono::steady_clock::time_point deadline);

 private:
  ServerOptions options_;
  std::unique_ptr<BindingCache> bindings_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<ApiKeys> api_keys_;
  std::unique_ptr<KeySpend> key_spend_;
  std::unique_ptr<KeyMetrics> key_metrics_;
  std::unique_ptr<KeyAdmission> admission_;
  std::unique_ptr<http::Routes> routes_;
  std::unique_ptr<http::Gatekeeper> gate_;
  std::unique_ptr<http::HttpServer> http_;
  std::unique_ptr<ReplyBox> replies_;
  std::unique_ptr<ChatPipeline> pipeline_;
  std::unique_ptr<PeriodicMemoryTrim> memory_trim_;
  std::unique_ptr<BatchRunner> batches_;
  std::unique_ptr<BatchUploads> uploads_;
  int port_ = -1;

  std::mutex shutdown_mutex_;
  std::condition_variable http_done_cv_;
  bool http_done_ = false;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
};

}  // namespace overhead::serve
