#include "backends/aws_provision.hpp"

#include <map>
#include <stdexcept>
#include <thread>

#include "aws/json_protocol.hpp"

namespace overhead::backends {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

constexpr const char* kDlqRetentionSeconds = "1209600";  // 14 days, SQS's longest: time to look at what failed

json call(aws::JsonProtocolClient& client, const std::string& action, const json& body, milliseconds timeout,
          const std::string& shown) {
  const std::string answer = client.call(action, body.dump(), timeout, shown);
  if (answer.empty()) return json::object();
  json parsed = json::parse(answer, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object())
    throw std::runtime_error(action + " on " + shown + ": the answer is not a JSON object");
  return parsed;
}

bool is_missing_queue(const aws::JsonCallError& e) {
  return e.code() == "QueueDoesNotExist" || e.code() == "AWS.SimpleQueueService.NonExistentQueue" ||
         e.code() == "NonExistentQueue";
}

// CreateQueue refuses a name that exists with other attributes. Between our GetQueueUrl and our
// CreateQueue another opener may have created the queue and set its attributes (the DLQ's
// retention, the redrive policy): that queue is the one we want, so we take its URL.
bool is_existing_queue(const aws::JsonCallError& e) {
  return e.code() == "QueueNameExists" || e.code() == "QueueAlreadyExists" || e.code() == "AWS.SimpleQueueService.QueueNameExists";
}

ProvisionedResource ensure_queue(aws::JsonProtocolClient& sqs, const std::string& name, milliseconds timeout,
                                 const std::string& shown) {
  ProvisionedResource r{name, "", false};
  try {
    r.where = call(sqs, "GetQueueUrl", {{"QueueName", name}}, timeout, shown).value("QueueUrl", std::string());
  } catch (const aws::JsonCallError& e) {
    if (!is_missing_queue(e)) throw;
    try {
      r.where = call(sqs, "CreateQueue", {{"QueueName", name}}, timeout, shown).value("QueueUrl", std::string());
      r.created = true;
    } catch (const aws::JsonCallError& e2) {
      if (!is_existing_queue(e2)) throw;
      r.where = call(sqs, "GetQueueUrl", {{"QueueName", name}}, timeout, shown).value("QueueUrl", std::string());
    }
  }
  if (r.where.empty()) throw std::runtime_error("SQS on " + shown + ": no QueueUrl for " + name);
  return r;
}

json records_table_request(const std::string& table) {
  return {{"TableName", table},
          {"BillingMode", "PAY_PER_REQUEST"},
          {"AttributeDefinitions",
           {{{"AttributeName", "experiment_tokenizer"}, {"AttributeType", "S"}}, {{"AttributeName", "id"}, {"AttributeType", "S"}}}},
          {"KeySchema", {{{"AttributeName", "experiment_tokenizer"}, {"KeyType", "HASH"}}, {{"AttributeName", "id"}, {"KeyType", "RANGE"}}}}};
}

}  // namespace

SqsQueuePair provision_sqs_queue(aws::JsonProtocolClient& sqs, const SqsQueueProvision& spec, milliseconds call_timeout,
                                 const std::string& shown) {
  SqsQueuePair out;
  json attributes = {{"VisibilityTimeout", std::to_string(spec.visibility_s)}};
  if (spec.max_receives > 0) {
    out.dlq = ensure_queue(sqs, spec.name + "-dlq", call_timeout, shown);
    (void)call(sqs, "SetQueueAttributes", {{"QueueUrl", out.dlq->where}, {"Attributes", {{"MessageRetentionPeriod", kDlqRetentionSeconds}}}},
               call_timeout, shown);
    const std::string arn = call(sqs, "GetQueueAttributes", {{"QueueUrl", out.dlq->where}, {"AttributeNames", {"QueueArn"}}},
                                 call_timeout, shown)
                                .value("Attributes", json::object())
                                .value("QueueArn", std::string());
    if (arn.empty()) throw std::runtime_error("SQS GetQueueAttributes on " + shown + ": no QueueArn for " + out.dlq->name);
    attributes["RedrivePolicy"] = json{{"deadLetterTargetArn", arn}, {"maxReceiveCount", spec.max_receives}}.dump();
  }
  out.queue = ensure_queue(sqs, spec.name, call_timeout, shown);
  (void)call(sqs, "SetQueueAttributes", {{"QueueUrl", out.queue.where}, {"Attributes", attributes}}, call_timeout, shown);
  return out;
}

std::string records_key_schema_mismatch(const json& table) {
  std::map<std::string, std::string> types, roles;
  for (const auto& a : table.value("AttributeDefinitions", json::array()))
    types[a.value("AttributeName", std::string())] = a.value("AttributeType", std::string());
  for (const auto& k : table.value("KeySchema", json::array()))
    roles[k.value("AttributeName", std::string())] = k.value("KeyType", std::string());
  // DescribeTable lists only the key attributes' definitions, so a missing type is not a mismatch.
  const auto type_ok = [&](const char* name) { return !types.count(name) || types[name] == "S"; };
  if (roles.size() == 2 && roles["experiment_tokenizer"] == "HASH" && roles["id"] == "RANGE" && type_ok("experiment_tokenizer") &&
      type_ok("id"))
    return "";
  return "has key schema " + table.value("KeySchema", json::array()).dump() +
         "; a record store needs hash key experiment_tokenizer (S) and range key id (S)";
}

namespace {

json keys_table_request(const std::string& table) {
  return {{"TableName", table},
          {"BillingMode", "PAY_PER_REQUEST"},
          {"AttributeDefinitions", {{{"AttributeName", "name"}, {"AttributeType", "S"}}}},
          {"KeySchema", {{{"AttributeName", "name"}, {"KeyType", "HASH"}}}}};
}

// The batch store's table (dynamodb_batch_store.hpp): hash key kind, range key id, and two local
// indexes on the same kind: by rank (every document, newest first) and by open_rank (present only
// on open batches, so the index holds those alone).
json batches_table_request(const std::string& table) {
  const auto index = [](const char* name, const char* sort) {
    return json{{"IndexName", name},
                {"KeySchema", {{{"AttributeName", "kind"}, {"KeyType", "HASH"}}, {{"AttributeName", sort}, {"KeyType", "RANGE"}}}},
                {"Projection", {{"ProjectionType", "ALL"}}}};
  };
  return {{"TableName", table},
          {"BillingMode", "PAY_PER_REQUEST"},
          {"AttributeDefinitions",
           {{{"AttributeName", "kind"}, {"AttributeType", "S"}},
            {{"AttributeName", "id"}, {"AttributeType", "S"}},
            {{"AttributeName", "rank"}, {"AttributeType", "S"}},
            {{"AttributeName", "open_rank"}, {"AttributeType", "S"}}}},
          {"KeySchema", {{{"AttributeName", "kind"}, {"KeyType", "HASH"}}, {{"AttributeName", "id"}, {"KeyType", "RANGE"}}}},
          {"LocalSecondaryIndexes", {index(kBatchesNewestIndex, "rank"), index(kBatchesOpenIndex, "open_rank")}}};
}

// DescribeTable, else CreateTable with `request`; the table's keys checked by `mismatch`; then
// waited on until ACTIVE.
ProvisionedResource provision_table(aws::JsonProtocolClient& dynamodb, const std::string& table_name, const json& request,
                                    std::string (*mismatch_of)(const json&), milliseconds call_timeout,
                                    milliseconds active_wait, const std::string& shown) {
  ProvisionedResource r{table_name, "", false};
  json table;
  try {
    table = call(dynamodb, "DescribeTable", {{"TableName", table_name}}, call_timeout, shown).value("Table", json::object());
  } catch (const aws::JsonCallError& e) {
    if (e.code() != "ResourceNotFoundException") throw;
    try {
      table = call(dynamodb, "CreateTable", request, call_timeout, shown).value("TableDescription", json::object());
      r.created = true;
    } catch (const aws::JsonCallError& e2) {
      if (e2.code() != "ResourceInUseException") throw;  // created by another opener meanwhile
      table = call(dynamodb, "DescribeTable", {{"TableName", table_name}}, call_timeout, shown).value("Table", json::object());
    }
  }
  if (const std::string mismatch = mismatch_of(table); !mismatch.empty())
    throw std::runtime_error("DynamoDB table \"" + table_name + "\" on " + shown + " " + mismatch);
  const auto deadline = std::chrono::steady_clock::now() + active_wait;
  for (int round = 0; table.value("TableStatus", std::string("ACTIVE")) != "ACTIVE"; ++round) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("DynamoDB table \"" + table_name + "\" on " + shown + " is still " + table.value("TableStatus", std::string()) +
                               " after " + std::to_string(active_wait.count() / 1000) + " s");
    std::this_thread::sleep_for(milliseconds(std::min(1000, 50 << std::min(round, 5))));
    table = call(dynamodb, "DescribeTable", {{"TableName", table_name}}, call_timeout, shown).value("Table", json::object());
  }
  r.where = table.value("TableArn", std::string());
  return r;
}

}  // namespace

ProvisionedResource provision_records_table(aws::JsonProtocolClient& dynamodb, const std::string& table_name,
                                            milliseconds call_timeout, milliseconds active_wait, const std::string& shown) {
  return provision_table(dynamodb, table_name, records_table_request(table_name), &records_key_schema_mismatch, call_timeout,
                         active_wait, shown);
}

std::string keys_key_schema_mismatch(const json& table) {
  const json keys = table.value("KeySchema", json::array());
  if (keys.size() == 1 && keys[0].value("AttributeName", std::string()) == "name" && keys[0].value("KeyType", std::string()) == "HASH")
    return "";
  return "has key schema " + keys.dump() + "; a key store needs hash key name (S)";
}

ProvisionedResource provision_keys_table(aws::JsonProtocolClient& dynamodb, const std::string& table_name,
                                         milliseconds call_timeout, milliseconds active_wait, const std::string& shown) {
  return provision_table(dynamodb, table_name, keys_table_request(table_name), &keys_key_schema_mismatch, call_timeout,
                         active_wait, shown);
}

std::string batches_key_schema_mismatch(const json& table) {
  std::map<std::string, std::string> roles;
  for (const auto& k : table.value("KeySchema", json::array()))
    roles[k.value("AttributeName", std::string())] = k.value("KeyType", std::string());
  std::map<std::string, bool> indexes;
  for (const auto& i : table.value("LocalSecondaryIndexes", json::array())) indexes[i.value("IndexName", std::string())] = true;
  if (roles.size() == 2 && roles["kind"] == "HASH" && roles["id"] == "RANGE" && indexes[kBatchesNewestIndex] && indexes[kBatchesOpenIndex])
    return "";
  return "has key schema " + table.value("KeySchema", json::array()).dump() + " and local indexes " +
         table.value("LocalSecondaryIndexes", json::array()).dump() +
         "; a batch store needs hash key kind (S), range key id (S) and the local indexes " + kBatchesNewestIndex + " and " +
         kBatchesOpenIndex;
}

ProvisionedResource provision_batches_table(aws::JsonProtocolClient& dynamodb, const std::string& table_name,
                                            milliseconds call_timeout, milliseconds active_wait, const std::string& shown) {
  return provision_table(dynamodb, table_name, batches_table_request(table_name), &batches_key_schema_mismatch, call_timeout,
                         active_wait, shown);
}

}  // namespace overhead::backends
