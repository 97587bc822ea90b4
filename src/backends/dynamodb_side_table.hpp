// What the DynamoDB stores beside the records table (dynamodb_key_store: TABLE-keys,
// dynamodb_batch_store: TABLE-batches) share, so each says only its items and calls:
//   - the side table's name from the URL's TABLE and a suffix, refused past DynamoDB's 255 bytes;
//   - opening it: DescribeTable; a missing table is a permanent error saying how to make it, or
//     with create=1 it is made (aws_provision.hpp) and awaited; a table of another shape is refused;
//   - every call's errors as StoreError: throttling, 5xx and a lost connection are retried by the
//     client, then thrown transient; the others permanent, with a hint; an answer that is not JSON
//     is transient;
//   - a Scan or Query read page by page (LastEvaluatedKey -> ExclusiveStartKey);
//   - an item's attributes read by type, a wrong type an error naming the attribute.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "backends/aws_provision.hpp"
#include "backends/dynamodb_target.hpp"
#include "ports/backend_url.hpp"

namespace overhead::backends {

// `records` + `suffix`; throws std::invalid_argument naming `role` when it is over 255 bytes.
[[nodiscard]] std::string dynamodb_side_table_name(const ports::BackendUrl& url, const std::string& records, std::string_view suffix,
                                                   std::string_view role);

class DynamoDbSideTable {
 public:
  struct Shape {
    std::string role;  // how messages name the store: "key store"
    ProvisionedResource (*provision)(aws::JsonProtocolClient&, const std::string& table, std::chrono::milliseconds call_timeout,
                                     std::chrono::milliseconds active_wait, const std::string& shown);
    std::string (*mismatch)(const nlohmann::json& table);  // "" when a DescribeTable "Table" fits
    std::string create_command;                            // the `aws dynamodb create-table` line that makes it
  };

  // Checks (or with the target's create=1, makes) the table `name`; throws StoreError.
  DynamoDbSideTable(const DynamoDbTarget& target, std::string name, const Shape& shape);

  // One call; its answer's JSON object. Throws StoreError.
  nlohmann::json call(std::string_view action, const nlohmann::json& request) const;
  // A call whose ConditionExpression may fail: false when it did, else as call().
  bool call_if(std::string_view action, const nlohmann::json& request) const;
  // A Scan or Query page by page; `fn` sees every item.
  void paginate(std::string_view action, nlohmann::json request, const std::function<void(const nlohmann::json&)>& fn) const;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& url() const { return url_; }

 private:
  [[noreturn]] void fail(std::string_view action, const std::exception& e) const;

  std::shared_ptr<aws::JsonProtocolClient> client_;
  const std::string name_;
  const std::chrono::milliseconds timeout_;
  const std::string url_;
};

// An attribute's S value ("" when absent).
[[nodiscard]] std::string dynamodb_text(const nlohmann::json& item, const char* name, const std::string& where);
// An attribute's N value as text ("" when absent).
[[nodiscard]] std::string dynamodb_number_text(const nlohmann::json& item, const char* name, const std::string& where);
// An attribute's N value as a whole number (0 when absent).
[[nodiscard]] std::int64_t dynamodb_int(const nlohmann::json& item, const char* name, const std::string& where);
// An attribute's BOOL value (false when absent).
[[nodiscard]] bool dynamodb_bool(const nlohmann::json& item, const char* name, const std::string& where);
// {"N": "<v>"}
[[nodiscard]] inline nlohmann::json dynamodb_int_value(std::int64_t v) { return {{"N", std::to_string(v)}}; }

}  // namespace overhead::backends
