// `overhead lambda`: the consumer as an AWS Lambda custom runtime (the zip's `bootstrap` runs it).
// Lambda's SQS event source hands the log queue's messages over in batches; each invocation's
// messages go through the consumer's batch step (pipe/store_step.hpp) into the store (--store or
// $OVERHEAD_STORE), and the answer lists, as
// `batchItemFailures`, the messages whose record could not be stored (a body that is no log
// message, a store refusal, a store still failing after the retries, a stamp patch whose record
// is not stored yet), so SQS deletes the others and redelivers only those (the event source
// mapping needs FunctionResponseTypes = ReportBatchItemFailures). SQS's own redrive policy then
// moves a message that keeps failing to the dead-letter queue. Each failure is one JSON line on
// stderr (CloudWatch Logs) with its reason. An event that is not an SQS batch, or a failure that
// leaves nothing per message to report, is an invocation error (the whole batch comes back).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "aws/lambda_runtime.hpp"
#include "backends/open.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "pipe/store_step.hpp"
#include "ports/retry.hpp"
#include "ports/store.hpp"

namespace overhead::cli {

namespace {

using json = nlohmann::json;

struct LambdaOptions {
  std::string store;
  std::size_t max_invocations = 0;  // 0 = serve until Lambda stops the process
};

// One line for CloudWatch about a message that failed (never a secret: store errors show
// redacted URLs, and the body is not logged, only its message id).
void log_failure(const std::string& request_id, const std::string& message_id, const std::string& kind,
                 const std::string& reason) {
  const json line = {{"level", "error"}, {"requestId", request_id}, {"messageId", message_id}, {"kind", kind},
                     {"reason", reason}};
  std::fprintf(stderr, "%s\n", line.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
}

// The handler: an SQS event in, the partial batch response out (the storing is the consumer's
// batch step, pipe::StoreStep). Throws std::invalid_argument for an event that is not an SQS batch.
json handle_sqs_event(const std::string& event_text, ports::Store& store, const std::string& request_id) {
  const json event = json::parse(event_text, nullptr, false);
  if (!event.is_object() || !event.contains("Records") || !event["Records"].is_array())
    throw std::invalid_argument("the event is not an SQS batch: no Records array");
  std::vector<std::string> failed;  // message ids, in event order of discovery
  const auto fail = [&](const pipe::MessageFailure& f) {
    log_failure(request_id, f.message_id, pipe::failure_kind_name(f.kind), f.reason);
    failed.push_back(f.message_id);
  };
  pipe::StoreStep step(store, ports::RetryPolicy::jittered());
  std::size_t n = 0;
  for (const auto& r : event["Records"]) {
    ++n;
    if (!r.is_object() || !r.contains("messageId") || !r["messageId"].is_string())
      throw std::invalid_argument("Records[" + std::to_string(n - 1) + "] has no messageId");
    const std::string id = r["messageId"].get<std::string>();
    if (!r.contains("body") || !r["body"].is_string()) {
      fail({id, pipe::StoreFailureKind::bad_message, "Records[" + std::to_string(n - 1) + "].body is missing or not a string"});
      continue;
    }
    if (auto f = step.add(id, r["body"].get_ref<const std::string&>())) fail(*f);
  }
  for (const auto& f : step.store()) fail(f);
  json items = json::array();
  for (const auto& id : failed) items.push_back({{"itemIdentifier", id}});
  return json{{"batchItemFailures", items}};
}

int lambda_command(const LambdaOptions& o) {
  const char* api = std::getenv("AWS_LAMBDA_RUNTIME_API");
  if (!api || !*api) {
    std::fprintf(stderr, "overhead lambda: AWS_LAMBDA_RUNTIME_API is not set (Lambda sets it; this command runs as "
                         "a function's bootstrap)\n");
    return 2;
  }
  std::unique_ptr<aws::LambdaRuntime> runtime;
  try {
    runtime = std::make_unique<aws::LambdaRuntime>(api);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead lambda: %s\n", e.what());
    return 2;
  }
  std::string store_url = o.store;
  if (store_url.empty())
    if (const char* env = std::getenv("OVERHEAD_STORE")) store_url = env;
  std::unique_ptr<ports::Store> store;
  try {
    if (store_url.empty()) throw std::invalid_argument("no store: pass --store URL or set OVERHEAD_STORE");
    store = backends::open_store(store_url);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead lambda: init: %s\n", e.what());
    try {
      runtime->init_error("Runtime.InitError", e.what());
    } catch (const std::exception& post) {
      std::fprintf(stderr, "overhead lambda: %s\n", post.what());
    }
    return 1;
  }
  for (std::size_t served = 0; o.max_invocations == 0 || served < o.max_invocations; ++served) {
    aws::LambdaInvocation inv;
    try {
      inv = runtime->next();
    } catch (const std::exception& e) {
      // Lambda restarts a runtime that exits; a Runtime API that does not answer has nothing to retry.
      std::fprintf(stderr, "overhead lambda: %s\n", e.what());
      return 1;
    }
    try {
      std::string answer;
      try {
        answer = handle_sqs_event(inv.event, *store, inv.request_id).dump();
      } catch (const std::invalid_argument& e) {
        runtime->invocation_error(inv.request_id, "InvalidEvent", e.what());
        continue;
      } catch (const std::exception& e) {
        runtime->invocation_error(inv.request_id, "HandlerError", e.what());
        continue;
      }
      runtime->respond(inv.request_id, answer);
    } catch (const aws::LambdaRuntimeError& e) {
      std::fprintf(stderr, "overhead lambda: %s\n", e.what());
      return 1;
    }
  }
  return 0;
}

}  // namespace

void add_lambda_command(CLI::App& app, int& exit_code) {
  static LambdaOptions o;
  CLI::App* cmd = app.add_subcommand(
      "lambda", "The consumer as an AWS Lambda custom runtime: SQS event batches -> record store");
  cmd->add_option("--store", o.store, "Record store URL (default $OVERHEAD_STORE), e.g. dynamodb://TABLE");
  cmd->add_option("--max-invocations", o.max_invocations, "Exit after this many events (0 = serve until stopped)")
      ->check(integer_in(0, 1000000000));
  cmd->callback([&exit_code] { exit_code = lambda_command(o); });
}

}  // namespace overhead::cli
