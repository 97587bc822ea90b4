// `overhead aws-init`: creates on AWS (or an emulator) what the seed's Terraform creates, so a
// run can point at them: the prompt (input) queue and the log queue, each with a dead-letter queue
// and a redrive policy; the `experiment_records` table (PAY_PER_REQUEST, hash key
// experiment_tokenizer S, range key id S); and a bucket for case 1's CSV. Beside the records table,
// the API keys' and the Batch API's tables that `overhead serve --store dynamodb://...` reads.
// Every name carries the prefix: P-experiment-prompt-queue, P-experiment-db-queue (+ "-dlq"),
// P-experiment_records (+ "-keys", "-batches"), P-experiment-results.
//
// Idempotent: what exists is kept (a queue's redrive policy and visibility are set again to the
// values asked for; an existing table must have the seed's keys, or it is an error naming them;
// a bucket this account owns already is fine, one someone else owns is an error). Credentials and
// region come from the standard chain (aws/credentials.hpp); no output or error holds a secret.
#pragma once

#include <string>
#include <vector>

namespace overhead::cli {

struct AwsInitOptions {
  std::string region;
  std::string prefix;             // [a-z0-9-], 1..40, starts with a letter or digit
  std::string endpoint;           // one endpoint for all three services (an emulator or a proxy), or empty
  std::string sqs_endpoint;       // per-service overrides of `endpoint`
  std::string dynamodb_endpoint;
  std::string s3_endpoint;
  int max_receives = 5;           // the redrive policy's maxReceiveCount
  int visibility_s = 30;          // the queues' VisibilityTimeout
};

// What exists after the run, and whether this run created it.
struct AwsInitResult {
  struct Item {
    std::string kind;   // "queue", "dlq" (dead-letter queue), "table", "bucket"
    std::string name;
    std::string where;  // the queue URL, table ARN or bucket URL
    bool created = false;
  };
  std::vector<Item> items;
  // The backend URLs to give `overhead run` / `worker` / `consume` / `analyze`.
  std::string queue_url, log_queue_url, store_url, object_store_url;
};

// Throws std::invalid_argument for a bad prefix or option, std::runtime_error (with the service's
// error code and a hint) when a call fails.
AwsInitResult aws_init(const AwsInitOptions& options);

// The names aws_init uses for a prefix (checked), in the order: prompt queue, log queue, table,
// bucket, the key store's and the batch store's tables.
struct AwsInitNames {
  std::string prompt_queue, log_queue, table, bucket, keys_table, batches_table;
};
AwsInitNames aws_init_names(const std::string& prefix);

}  // namespace overhead::cli
