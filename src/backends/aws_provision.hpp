// Creating the AWS resources the adapters use, in one place: an SQS queue with its dead-letter
// queue and redrive policy, the seed's DynamoDB records table, and the key and batch stores' tables beside it. The adapters call these when
// their URL says create=1 (sqs_queue.cpp, dynamodb_store.cpp), and `overhead aws-init` calls them
// for the whole set (cli/aws_init.cpp), so a queue or a table is made the same way by both.
//
// Every function is idempotent: what exists is kept (a queue's attributes are set again to the
// values asked for; an existing table must have the seed's keys). Service errors come out as
// aws::JsonCallError, unchanged, for the caller to word in its own terms (QueueError, StoreError,
// or aws-init's hints); an answer that is not what the API documents is a std::runtime_error.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace overhead::aws {
class JsonProtocolClient;
}

namespace overhead::backends {

struct ProvisionedResource {
  std::string name;
  std::string where;  // the queue URL, or the table ARN
  bool created = false;
};

struct SqsQueueProvision {
  std::string name;
  int visibility_s = 30;  // the queue's VisibilityTimeout
  int max_receives = 5;   // the redrive policy's maxReceiveCount; 0: no dead-letter queue
};

struct SqsQueuePair {
  ProvisionedResource queue;
  std::optional<ProvisionedResource> dlq;  // `<name>-dlq`, kept 14 days, when max_receives > 0
};

// GetQueueUrl, else CreateQueue without attributes (which succeeds for an existing queue whatever
// its attributes, unlike CreateQueue with attributes); the attributes are set afterwards.
[[nodiscard]] SqsQueuePair provision_sqs_queue(aws::JsonProtocolClient& sqs, const SqsQueueProvision& spec,
                                               std::chrono::milliseconds call_timeout, const std::string& shown);

// The seed's `experiment_records` shape: PAY_PER_REQUEST, hash key experiment_tokenizer (S),
// range key id (S). Created when missing, then waited on until ACTIVE for at most `active_wait`.
// A table with other keys is a std::runtime_error naming what it has.
[[nodiscard]] ProvisionedResource provision_records_table(aws::JsonProtocolClient& dynamodb, const std::string& table,
                                                          std::chrono::milliseconds call_timeout,
                                                          std::chrono::milliseconds active_wait, const std::string& shown);

// Whether a DescribeTable "Table" object has the records table's keys; else a sentence saying
// what it has instead (empty when it fits).
[[nodiscard]] std::string records_key_schema_mismatch(const nlohmann::json& table);

// The stores beside a records table TABLE are named TABLE + these (`overhead aws-init` makes them).
inline constexpr std::string_view kKeysTableSuffix = "-keys";
inline constexpr std::string_view kBatchesTableSuffix = "-batches";

// The key store's table (backends/dynamodb_key_store.hpp): PAY_PER_REQUEST, hash key name (S);
// made and awaited as the records table.
[[nodiscard]] ProvisionedResource provision_keys_table(aws::JsonProtocolClient& dynamodb, const std::string& table,
                                                       std::chrono::milliseconds call_timeout,
                                                       std::chrono::milliseconds active_wait, const std::string& shown);
// The same check for the key store's table.
[[nodiscard]] std::string keys_key_schema_mismatch(const nlohmann::json& table);

// The batch store's table (backends/dynamodb_batch_store.hpp): PAY_PER_REQUEST, hash key kind (S),
// range key id (S), local indexes kBatchesNewestIndex (range key rank) and kBatchesOpenIndex (range
// key open_rank), all attributes projected; made and awaited as the records table.
inline constexpr const char* kBatchesNewestIndex = "newest";
inline constexpr const char* kBatchesOpenIndex = "open";
[[nodiscard]] ProvisionedResource provision_batches_table(aws::JsonProtocolClient& dynamodb, const std::string& table,
                                                          std::chrono::milliseconds call_timeout,
                                                          std::chrono::milliseconds active_wait, const std::string& shown);
// The same check for the batch store's table.
[[nodiscard]] std::string batches_key_schema_mismatch(const nlohmann::json& table);

}  // namespace overhead::backends
