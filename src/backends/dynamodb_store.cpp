// DynamoDbStore: the dynamodb:// adapter (see dynamodb_store.hpp for the mapping onto DynamoDB calls).
#include "backends/dynamodb_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "aws/credentials.hpp"
#include "aws/json_protocol.hpp"
#include "backends/aws_provision.hpp"
#include "backends/dynamodb_item.hpp"
#include "backends/dynamodb_target.hpp"
#include "ports/record_fields.hpp"
#include "util/json_writer.hpp"

namespace overhead::backends {

namespace {

using json = nlohmann::json;
using ports::BackendUrl;
using ports::EntryFailure;
using ports::Failure;
using ports::FieldType;
using ports::FieldValue;
using ports::kDefaultCallTimeout;
using ports::kRecordFields;
using ports::Record;
using ports::StampPatch;
using ports::Store;
using ports::StoreError;
using ports::UpsertFailure;
using std::chrono::milliseconds;

constexpr std::size_t kBatchWriteMax = 25;  // DynamoDB's BatchWriteItem limit
constexpr milliseconds kCreateWait{120000};  // how long create=1 waits for ACTIVE

struct DynamoDbConfig {
  std::string table;
  std::vector<std::string> tokenizers;  // partitions a scan of one experiment queries
  milliseconds call_timeout{kDefaultCallTimeout};
  bool create = false;
};

std::string hint(const std::string& code, const std::string& message) {
  if (code == "ResourceNotFoundException")
    return " (check the table name and the region; create=1 in the URL creates the table)";
  if (code.find("AccessDenied") != std::string::npos)
    return " (check that the IAM policy allows this DynamoDB action on the table)";
  if (code == "UnrecognizedClientException" || code == "InvalidSignatureException" || code == "IncompleteSignature" ||
      code == "MissingAuthenticationTokenException" || code == "ExpiredTokenException")
    return " (check the access key, the secret, the session token and the region)";
  if (code == "ValidationException" && message.find("key") != std::string::npos)
    return " (check that the table has hash key experiment_tokenizer (S) and range key id (S))";
  if (code == "credentials")
    return " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance role)";
  return "";
}

[[noreturn]] void throw_store_error(const aws::JsonCallError& e) {
  throw StoreError(e.what() + hint(e.code(), e.what()), e.transient() ? Failure::transient : Failure::permanent);
}

std::string json_literal(std::string_view s) {
  std::string out;
  util::append_json_string(out, s);
  return out;
}

// The aws CLI command that creates the seed's table, for the "missing table" message.
std::string create_command(const std::string& table) {
  return "aws dynamodb create-table --table-name " + table +
         " --attribute-definitions AttributeName=experiment_tokenizer,AttributeType=S AttributeName=id,AttributeType=S"
         " --key-schema AttributeName=experiment_tokenizer,KeyType=HASH AttributeName=id,KeyType=RANGE"
         " --billing-mode PAY_PER_REQUEST";
}

// A record merged from the records of one key in a batch, with the batch positions it stands for.
struct Row {
  const Record* record;
  std::vector<std::size_t> indices;
};

class DynamoDbStore final : public Store {
 public:
  DynamoDbStore(std::shared_ptr<aws::JsonProtocolClient> client, DynamoDbConfig config, std::string shown)
      : client_(std::move(client)), config_(std::move(config)), url_(std::move(shown)), table_json_(json_literal(config_.table)) {
    open_table();
  }

  void upsert(const Record& record) override { put_keeping_stamps(record); }

  std::vector<UpsertFailure> upsert_batch(std::span<const Record> records) override {
    if (records.empty()) return {};
    // One row per key, as if the batch were upserted in order: the last record wins, and a stamp
    // it carries as 0 keeps an earlier one's non-zero value (BatchWriteItem refuses repeated keys).
    std::vector<Row> rows;
    std::deque<Record> merged;
    std::map<std::pair<std::string_view, std::string_view>, std::size_t> seen;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const Record& r = records[i];
      const auto [it, fresh] = seen.try_emplace({r.experiment_tokenizer, r.id}, rows.size());
      if (fresh) {
        rows.push_back({&r, {i}});
        continue;
      }
      Row& row = rows[it->second];
      Record next = r;
      if (next.publish_acked == 0) next.publish_acked = row.record->publish_acked;
      if (next.input_deleted == 0) next.input_deleted = row.record->input_deleted;
      row.record = &merged.emplace_back(std::move(next));
      row.indices.push_back(i);
    }
    std::vector<UpsertFailure> failures;
    auto fail = [&](const Row& row, bool retryable, const std::string& message) {
      for (std::size_t i : row.indices) failures.push_back({i, EntryFailure{retryable, message}});
    };
    std::vector<const Row*> sendable;
    for (const Row& row : rows) {
      if (const std::string why = unsendable(*row.record); !why.empty()) fail(row, false, why);
      else sendable.push_back(&row);
    }
    for (std::size_t at = 0; at < sendable.size(); at += kBatchWriteMax) {
      const std::span<const Row* const> chunk(sendable.data() + at, std::min(kBatchWriteMax, sendable.size() - at));
      const std::vector<bool> stored = stored_keys(chunk);
      std::vector<const Row*> fresh;
      for (std::size_t k = 0; k < chunk.size(); ++k) {
        if (stored[k]) update_keeping_stamps(*chunk[k]->record);
        else fresh.push_back(chunk[k]);
      }
      write_fresh(fresh, fail);
    }
    std::sort(failures.begin(), failures.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    return failures;
  }

  std::size_t update_stamps(std::span<const StampPatch> patches) override {
    std::size_t found = 0;
    for (const auto& p : patches) {
      std::string body = "{\"TableName\":" + table_json_ + ",\"Key\":";
      append_dynamodb_key(body, p.experiment_tokenizer, p.id);
      std::string set, names = "\"#id\":\"id\"", values;
      int k = 0;
      for (const auto& f : kRecordFields) {
        if (!f.patched) continue;
        const std::int64_t value = f.name == "publish_acked" ? p.publish_acked : p.input_deleted;
        const std::string n = "#s" + std::to_string(k), c = ":s" + std::to_string(k);
        names += ",\"" + n + "\":\"" + std::string(f.name) + "\"";
        set += std::string(set.empty() ? "SET " : ", ") + n + " = ";
        if (value != 0) {
          set += c;
          values += std::string(values.empty() ? "" : ",") + "\"" + c + "\":{\"N\":\"" + std::to_string(value) + "\"}";
        } else {
          set += "if_not_exists(" + n + ", :zero)";  // a zero in a patch keeps the stored value
          if (values.find("\":zero\"") == std::string::npos)
            values += std::string(values.empty() ? "" : ",") + "\":zero\":{\"N\":\"0\"}";
        }
        ++k;
      }
      body += ",\"UpdateExpression\":" + json_literal(set) + ",\"ConditionExpression\":\"attribute_exists(#id)\"";
      body += ",\"ExpressionAttributeNames\":{" + names + "},\"ExpressionAttributeValues\":{" + values + "}}";
      try {
        (void)client_->call("UpdateItem", body, config_.call_timeout, url_);
        ++found;
      } catch (const aws::JsonCallError& e) {
        if (e.code() != "ConditionalCheckFailedException") throw_store_error(e);
      }
    }
    return found;
  }

  void scan(const std::string& experiment, const std::function<void(const Record&)>& fn) override {
    if (!experiment.empty() && !config_.tokenizers.empty()) {
      for (const auto& tokenizer : config_.tokenizers) {
        json req = {{"TableName", config_.table},
                    {"KeyConditionExpression", "#k = :k"},
                    {"ExpressionAttributeNames", {{"#k", "experiment_tokenizer"}}},
                    {"ExpressionAttributeValues", {{":k", {{"S", experiment + "#" + tokenizer}}}}},
                    {"ConsistentRead", true}};
        paginate("Query", req, fn);
      }
      return;
    }
    json req = {{"TableName", config_.table}, {"ConsistentRead", true}};
    if (!experiment.empty()) {
      req["FilterExpression"] = "#e = :e";
      req["ExpressionAttributeNames"] = {{"#e", "experiment"}};
      req["ExpressionAttributeValues"] = {{":e", {{"S", experiment}}}};
    }
    paginate("Scan", req, fn);
  }

  const std::string& url() const override { return url_; }

 private:
  json call(std::string_view action, const std::string& body) {
    try {
      const std::string answer = client_->call(action, body, config_.call_timeout, url_);
      return answer.empty() ? json::object() : json::parse(answer);
    } catch (const aws::JsonCallError& e) {
      throw_store_error(e);
    } catch (const json::exception&) {
      throw StoreError("dynamodb " + std::string(action) + " on " + url_ + ": the answer is not JSON", Failure::transient);
    }
  }

  // Query or Scan page by page (LastEvaluatedKey -> ExclusiveStartKey).
  void paginate(std::string_view action, json req, const std::function<void(const Record&)>& fn) {
    for (;;) {
      const json page = call(action, req.dump());
      for (const auto& item : page.value("Items", json::array())) {
        Record r;
        try {
          r = record_from_dynamodb_item(item);
        } catch (const std::invalid_argument& e) {
          const auto key = [&](const char* name) {
            const auto it = item.find(name);
            return it != item.end() && it->is_object() ? it->value("S", std::string("?")) : std::string("?");
          };
          throw StoreError(url_ + ": item (" + key("experiment_tokenizer") + ", " + key("id") + "): " + e.what(),
                           Failure::permanent);
        }
        fn(r);
      }
      const auto last = page.find("LastEvaluatedKey");
      if (last == page.end() || last->empty()) return;
      req["ExclusiveStartKey"] = *last;
    }
  }

  // Why DynamoDB would refuse this record whatever we do (and, in a batch, the whole call with
  // it), or "" when it can be sent.
  static std::string unsendable(const Record& r) {
    if (r.experiment_tokenizer.empty() || r.id.empty())
      return "a key attribute (experiment_tokenizer, id) is empty, which DynamoDB refuses";
    const std::size_t size = dynamodb_item_size(r);
    if (size > kDynamoDbMaxItemBytes)
      return "record of " + std::to_string(size) + " bytes is over DynamoDB's 400 KB item limit";
    return "";
  }

  // Which rows' keys the table holds (consistent read). A key DynamoDB leaves unprocessed after
  // the retries counts as stored: the UpdateItem path is right for both cases, only slower.
  std::vector<bool> stored_keys(std::span<const Row* const> chunk) {
    std::vector<bool> stored(chunk.size(), false);
    std::map<std::pair<std::string, std::string>, std::size_t> where;
    for (std::size_t k = 0; k < chunk.size(); ++k) where[{chunk[k]->record->experiment_tokenizer, chunk[k]->record->id}] = k;
    std::string keys;
    for (const Row* row : chunk) {
      keys += keys.empty() ? "" : ",";
      append_dynamodb_key(keys, row->record->experiment_tokenizer, row->record->id);
    }
    std::string body = "{\"RequestItems\":{" + table_json_ +
                       ":{\"Keys\":[" + keys +
                       "],\"ConsistentRead\":true,\"ProjectionExpression\":\"#k, #i\","
                       "\"ExpressionAttributeNames\":{\"#k\":\"experiment_tokenizer\",\"#i\":\"id\"}}}}";
    for (int attempt = 0;; ++attempt) {
      const json res = call("BatchGetItem", body);
      for (const auto& item : res.value("Responses", json::object()).value(config_.table, json::array())) {
        const auto it = where.find({item.at("experiment_tokenizer").value("S", std::string()),
                                    item.at("id").value("S", std::string())});
        if (it != where.end()) stored[it->second] = true;
      }
      const json left = res.value("UnprocessedKeys", json::object()).value(config_.table, json::object());
      if (left.value("Keys", json::array()).empty()) return stored;
      if (attempt + 1 >= client_->retry_policy().max_attempts) {
        for (const auto& key : left.at("Keys")) {
          const auto it = where.find({key.at("experiment_tokenizer").value("S", std::string()),
                                      key.at("id").value("S", std::string())});
          if (it != where.end()) stored[it->second] = true;
        }
        return stored;
      }
      std::this_thread::sleep_for(client_->backoff(attempt, true));
      body = json{{"RequestItems", {{config_.table, left}}}}.dump();
    }
  }

  // BatchWriteItem of rows not stored yet; UnprocessedItems again under backoff.
  template <class Fail>
  void write_fresh(const std::vector<const Row*>& fresh, Fail& fail) {
    if (fresh.empty()) return;
    std::map<std::pair<std::string, std::string>, const Row*> pending;
    for (const Row* row : fresh) pending[{row->record->experiment_tokenizer, row->record->id}] = row;
    std::vector<const Record*> items;
    for (const Row* row : fresh) items.push_back(row->record);
    std::string body;
    append_batch_write_request(body, config_.table, items);
    for (int attempt = 0;; ++attempt) {
      std::string answer;
      try {
        answer = client_->call("BatchWriteItem", body, config_.call_timeout, url_);
      } catch (const aws::JsonCallError& e) {
        // One invalid item fails the whole call: write them one by one, so only it fails.
        if (e.code() != "ValidationException" || pending.size() < 2) throw_store_error(e);
        for (const auto& [key, row] : pending) {
          try {
            put_keeping_stamps(*row->record);
          } catch (const StoreError& one) {
            if (one.retryable()) throw;
            fail(*row, false, one.what());
          }
        }
        return;
      }
      const json res = json::parse(answer, nullptr, false);
      if (res.is_discarded())
        throw StoreError("dynamodb BatchWriteItem on " + url_ + ": the answer is not JSON", Failure::transient);
      const json left = res.value("UnprocessedItems", json::object()).value(config_.table, json::array());
      if (left.empty()) return;
      std::map<std::pair<std::string, std::string>, const Row*> still;
      for (const auto& request : left) {
        const json& item = request.at("PutRequest").at("Item");
        const std::pair<std::string, std::string> key{item.at("experiment_tokenizer").value("S", std::string()),
                                                      item.at("id").value("S", std::string())};
        if (const auto it = pending.find(key); it != pending.end()) still.insert(*it);
      }
      pending = std::move(still);
      if (pending.empty()) return;
      if (attempt + 1 >= client_->retry_policy().max_attempts) {
        for (const auto& [key, row] : pending)
          fail(*row, true,
               "DynamoDB left the record unprocessed after " + std::to_string(attempt + 1) +
                   " BatchWriteItem attempts (throughput exceeded)");
        return;
      }
      std::this_thread::sleep_for(client_->backoff(attempt, true));
      body = json{{"RequestItems", {{config_.table, left}}}}.dump();
    }
  }

  // PutItem that does not replace an item holding a stamp this record carries as 0; when the
  // condition fails, the record goes in by UpdateItem, which keeps those stamps.
  void put_keeping_stamps(const Record& r) {
    if (const std::string why = unsendable(r); !why.empty())
      throw StoreError(url_ + ": record (" + r.experiment_tokenizer + ", " + r.id + "): " + why, Failure::permanent);
    std::string body = "{\"TableName\":" + table_json_ + ",\"Item\":";
    append_dynamodb_item(body, r);
    std::string condition, names;
    int k = 0;
    for (const auto& f : kRecordFields) {
      if (!f.patched || std::get<std::int64_t>(f.get(r)) != 0) continue;
      const std::string n = "#s" + std::to_string(k++);
      names += ",\"" + n + "\":\"" + std::string(f.name) + "\"";
      condition += std::string(condition.empty() ? "" : " AND ") + "(attribute_not_exists(" + n + ") OR " + n + " = :zero)";
    }
    if (!condition.empty()) {
      // Stored stamps this record would erase must be absent or 0 (DynamoDB refuses redundant parentheses).
      if (k > 1) condition = "(" + condition + ")";
      body += ",\"ConditionExpression\":" + json_literal("attribute_not_exists(#id) OR " + condition);
      body += ",\"ExpressionAttributeNames\":{\"#id\":\"id\"" + names + "}";
      body += ",\"ExpressionAttributeValues\":{\":zero\":{\"N\":\"0\"}}";
    }
    body += "}";
    try {
      (void)client_->call("PutItem", body, config_.call_timeout, url_);
    } catch (const aws::JsonCallError& e) {
      if (e.code() != "ConditionalCheckFailedException") throw_store_error(e);
      update_keeping_stamps(r);
    }
  }

  // UpdateItem setting every non-key field; a patched stamp the record carries as 0 is written as
  // if_not_exists(stamp, 0), so a value already stored stays; an absent optional is removed.
  void update_keeping_stamps(const Record& r) {
    std::string set, remove, names, values;
    bool zero_used = false;
    for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
      const auto& f = kRecordFields[k];
      if (f.key) continue;
      const std::string n = "#f" + std::to_string(k), c = ":f" + std::to_string(k);
      names += std::string(names.empty() ? "" : ",") + "\"" + n + "\":\"" + std::string(f.name) + "\"";
      const FieldValue v = f.get(r);
      if (std::holds_alternative<std::monostate>(v)) {
        remove += std::string(remove.empty() ? " REMOVE " : ", ") + n;
        continue;
      }
      set += std::string(set.empty() ? "SET " : ", ") + n + " = ";
      if (f.patched && std::get<std::int64_t>(v) == 0) {
        set += "if_not_exists(" + n + ", :zero)";
        zero_used = true;
        continue;
      }
      set += c;
      values += std::string(values.empty() ? "" : ",") + "\"" + c + "\":";
      if (const auto* s = std::get_if<std::string_view>(&v)) {
        values += "{\"S\":";
        util::append_json_string(values, *s);
        values += "}";
      } else if (f.type == FieldType::boolean) {
        values += std::get<std::int64_t>(v) ? "{\"BOOL\":true}" : "{\"BOOL\":false}";
      } else if (const auto* d = std::get_if<double>(&v)) {
        values += "{\"N\":\"" + dynamodb_number(*d) + "\"}";
      } else {
        values += "{\"N\":\"" + std::to_string(std::get<std::int64_t>(v)) + "\"}";
      }
    }
    if (zero_used) values += std::string(values.empty() ? "" : ",") + "\":zero\":{\"N\":\"0\"}";
    std::string body = "{\"TableName\":" + table_json_ + ",\"Key\":";
    append_dynamodb_key(body, r.experiment_tokenizer, r.id);
    body += ",\"UpdateExpression\":" + json_literal(set + remove) + ",\"ExpressionAttributeNames\":{" + names +
            "},\"ExpressionAttributeValues\":{" + values + "}}";
    (void)call("UpdateItem", body);
  }

  // DescribeTable: the table exists (or is created with create=1) and has the seed's keys.
  void open_table() {
    const std::string describe = json{{"TableName", config_.table}}.dump();
    json table;
    try {
      table = json::parse(client_->call("DescribeTable", describe, config_.call_timeout, url_)).value("Table", json::object());
    } catch (const aws::JsonCallError& e) {
      if (e.code() != "ResourceNotFoundException") throw_store_error(e);
      if (!config_.create)
        throw StoreError(url_ + ": DynamoDB table \"" + config_.table + "\" does not exist in region " +
                             client_->endpoint().region + " at " + client_->endpoint().endpoint +
                             " (add create=1 to the URL to create it, or: " + create_command(config_.table) + ")",
                         Failure::permanent);
      table = create_table();
    } catch (const json::exception&) {
      throw StoreError("dynamodb DescribeTable on " + url_ + ": the answer is not JSON", Failure::transient);
    }
    check_keys(table);
  }

  // create=1: the table, made as `overhead aws-init` makes it, waited on until ACTIVE.
  json create_table() {
    try {
      (void)provision_records_table(*client_, config_.table, config_.call_timeout, kCreateWait, url_);
    } catch (const aws::JsonCallError& e) {
      throw_store_error(e);
    } catch (const std::runtime_error& e) {
      throw StoreError(url_ + ": " + e.what(), Failure::transient);
    }
    return call("DescribeTable", json{{"TableName", config_.table}}.dump()).value("Table", json::object());
  }

  void check_keys(const json& table) {
    if (const std::string mismatch = records_key_schema_mismatch(table); !mismatch.empty())
      throw StoreError(url_ + ": DynamoDB table \"" + config_.table + "\" " + mismatch, Failure::permanent);
  }

  std::shared_ptr<aws::JsonProtocolClient> client_;
  const DynamoDbConfig config_;
  const std::string url_;
  const std::string table_json_;  // the table name as a JSON string literal
};

}  // namespace

std::unique_ptr<Store> open_dynamodb_store(const BackendUrl& u) {
  DynamoDbTarget t = dynamodb_target(u);
  DynamoDbConfig c{t.table, std::move(t.tokenizers), t.call_timeout, t.create};
  return std::make_unique<DynamoDbStore>(std::move(t.client), std::move(c), std::move(t.shown));
}

std::unique_ptr<Store> open_dynamodb_store_read_only(const BackendUrl& u) {
  u.check_params({"region", "endpoint", "create", "tokenizers", "timeout_ms"});
  if (u.int_param("create", 0, 0, 1) == 1)
    throw std::invalid_argument(u.describe("store", "create=1: a reader never creates the table (drop create=1)"));
  return open_dynamodb_store(u);
}

}  // namespace overhead::backends
