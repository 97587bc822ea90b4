// `overhead aws-init --region R --prefix P [--endpoint URL]`: creates the queues, DLQs, table and
// bucket of a deployment (cli/aws_init.hpp) and prints what it found or made, then the backend
// URLs to pass to `overhead run`, `worker`, `consume` and `analyze`. Exit 0 when everything exists
// afterwards, 1 when a call failed (the message names the service, its code and what to check),
// 2 for a bad option.
#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

#include "cli/aws_init.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"

namespace overhead::cli {
namespace {

int run_aws_init(const AwsInitOptions& o) {
  AwsInitResult r;
  try {
    r = aws_init(o);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "overhead aws-init: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead aws-init: %s\n", e.what());
    return 1;
  }
  for (const auto& item : r.items)
    std::printf("%-8s %-7s %-40s %s\n", item.created ? "created" : "exists", item.kind.c_str(), item.name.c_str(),
                item.where.c_str());
  std::printf("\nqueue=%s\nlog_queue=%s\nstore=%s\nobject_store=%s\n", r.queue_url.c_str(), r.log_queue_url.c_str(),
              r.store_url.c_str(), r.object_store_url.c_str());
  std::printf("\nrun with:\n  overhead run --queue '%s' --log-queue '%s' --store '%s' --object-store '%s'\n",
              r.queue_url.c_str(), r.log_queue_url.c_str(), r.store_url.c_str(), r.object_store_url.c_str());
  return 0;
}

}  // namespace

void add_aws_init_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<AwsInitOptions>();
  CLI::App* cmd = app.add_subcommand(
      "aws-init", "Create the seed's AWS resources: prompt and log queues with DLQs, the experiment_records table, a bucket");
  cmd->add_option("--region", o->region, "AWS region, e.g. ap-northeast-1")->required();
  cmd->add_option("--prefix", o->prefix, "Name prefix: P-experiment-prompt-queue, P-experiment_records, ... "
                                         "(lower-case letters, digits, '-')")->required();
  cmd->add_option("--endpoint", o->endpoint, "One endpoint for SQS, DynamoDB and S3 (an emulator); default AWS's");
  cmd->add_option("--sqs-endpoint", o->sqs_endpoint, "SQS endpoint (overrides --endpoint)");
  cmd->add_option("--dynamodb-endpoint", o->dynamodb_endpoint, "DynamoDB endpoint (overrides --endpoint)");
  cmd->add_option("--s3-endpoint", o->s3_endpoint, "S3 endpoint (overrides --endpoint; path-style addressing)");
  cmd->add_option("--max-receives", o->max_receives, "Receives before a message moves to its DLQ")
      ->capture_default_str()->check(integer_in(1, 1000));
  cmd->add_option("--visibility-s", o->visibility_s, "The queues' visibility timeout in seconds")
      ->capture_default_str()->check(integer_in(0, 43200));
  cmd->callback([o, &exit_code] { exit_code = run_aws_init(*o); });
}

}  // namespace overhead::cli
