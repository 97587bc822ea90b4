// DynamoDbKeyStore: the dynamodb:// key store (see dynamodb_key_store.hpp for the calls it makes).
#include "backends/dynamodb_key_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <stdexcept>

#include "aws/json_protocol.hpp"
#include "backends/aws_provision.hpp"
#include "backends/dynamodb_target.hpp"
#include "backends/key_store_rows.hpp"
#include "util/number_text.hpp"

namespace overhead::backends {

namespace {

using json = nlohmann::json;
using ports::ApiKey;
using ports::Failure;
using ports::KeyExistsError;
using ports::KeyUsage;
using ports::StoreError;
using ports::UsageBucket;
using std::chrono::milliseconds;

constexpr milliseconds kKeysTableWait{120000};  // how long create=1 waits for ACTIVE

std::string key_store_hint(const std::string& code) {
  if (code == "ResourceNotFoundException") return " (check the table name and the region; create=1 in the URL creates the table)";
  if (code.find("AccessDenied") != std::string::npos)
    return " (check that the IAM policy allows this DynamoDB action on the table)";
  if (code == "UnrecognizedClientException" || code == "InvalidSignatureException" || code == "ExpiredTokenException")
    return " (check the access key, the secret, the session token and the region)";
  if (code == "credentials")
    return " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance role)";
  return "";
}

[[noreturn]] void throw_key_store_error(const aws::JsonCallError& e) {
  throw StoreError(e.what() + key_store_hint(e.code()), e.transient() ? Failure::transient : Failure::permanent);
}

std::string keys_create_command(const std::string& table) {
  return "aws dynamodb create-table --table-name " + table +
         " --attribute-definitions AttributeName=name,AttributeType=S --key-schema AttributeName=name,KeyType=HASH"
         " --billing-mode PAY_PER_REQUEST";
}

json dynamodb_number(std::int64_t v) { return {{"N", std::to_string(v)}}; }

class DynamoDbKeyStore final : public ports::KeyStore {
 public:
  explicit DynamoDbKeyStore(DynamoDbTarget target)
      : client_(std::move(target.client)),
        records_(std::move(target.table)),
        keys_(dynamodb_keys_table(records_)),
        timeout_(target.call_timeout),
        url_(std::move(target.shown)) {
    open_table(target.create);
  }

  void create(const ApiKey& key) override {
    json item = {{"name", {{"S", key.name}}},
                 {"secret_hash", {{"S", key.secret_hash}}},
                 {"rpm", dynamodb_number(key.rpm)},
                 {"tpm", dynamodb_number(key.tpm)},
                 {"models", {{"L", json::array()}}},
                 {"created_unix", dynamodb_number(key.created_unix)},
                 {"expires_unix", dynamodb_number(key.expires_unix)},
                 {"revoked_unix", dynamodb_number(key.revoked_unix)}};
    if (key.budget_usd) item["budget_usd"] = {{"N", util::shortest_double_text(*key.budget_usd)}};
    for (const auto& m : key.models) item["models"]["L"].push_back({{"S", m}});
    const json req = {{"TableName", keys_},
                      {"Item", item},
                      {"ConditionExpression", "attribute_not_exists(#n)"},
                      {"ExpressionAttributeNames", {{"#n", "name"}}}};
    try {
      (void)client_->call("PutItem", req.dump(), timeout_, url_);
    } catch (const aws::JsonCallError& e) {
      if (e.code() == "ConditionalCheckFailedException")
        throw KeyExistsError(url_ + ": a key named \"" + key.name + "\" exists already");
      throw_key_store_error(e);
    }
  }

  std::vector<ApiKey> list() override {
    std::vector<ApiKey> keys;
    paginate({{"TableName", keys_}, {"ConsistentRead", true}}, [&](const json& item) { keys.push_back(key_from_item(item)); });
    std::sort(keys.begin(), keys.end(), [](const ApiKey& a, const ApiKey& b) { return a.name < b.name; });
    return keys;
  }

  bool revoke(const std::string& name, std::int64_t now_unix) override {
    const json req = {{"TableName", keys_},
                      {"Key", {{"name", {{"S", name}}}}},
                      {"UpdateExpression", "SET #r = :now"},
                      {"ConditionExpression", "attribute_exists(#n) AND #r = :zero"},
                      {"ExpressionAttributeNames", {{"#n", "name"}, {"#r", "revoked_unix"}}},
                      {"ExpressionAttributeValues", {{":now", dynamodb_number(now_unix)}, {":zero", dynamodb_number(0)}}}};
    try {
      (void)client_->call("UpdateItem", req.dump(), timeout_, url_);
      return true;
    } catch (const aws::JsonCallError& e) {
      if (e.code() == "ConditionalCheckFailedException") return false;
      throw_key_store_error(e);
    }
  }

  KeyUsage usage(const std::string& name, const std::string& experiment) override {
    json req = {{"TableName", records_},
                {"ConsistentRead", true},
                {"FilterExpression", experiment.empty() ? "#k = :k" : "#k = :k AND #e = :e"},
                {"ProjectionExpression", "#m, #s, #t, #o, #c"},
                {"ExpressionAttributeNames",
                 {{"#k", "key_name"}, {"#m", "model"}, {"#s", "start_time"}, {"#t", "token_count"}, {"#o", "output_tokens"},
                  {"#c", "cost_usd"}}},
                {"ExpressionAttributeValues", {{":k", {{"S", name}}}}}};
    if (!experiment.empty()) {
      req["ExpressionAttributeNames"]["#e"] = "experiment";
      req["ExpressionAttributeValues"][":e"] = {{"S", experiment}};
    }
    std::map<std::string, UsageBucket> by_model, by_day;
    const std::string where = url_ + ": a record of key \"" + name + "\"";
    paginate(std::move(req), [&](const json& item) {
      const std::string model = text_of(item, "model");
      const std::string day(start_day(text_of(item, "start_time")));
      const std::int64_t prompt = int_of(item, "token_count", where), completion = int_of(item, "output_tokens", where);
      const double cost = real_of(item, "cost_usd", where);
      for (auto* b : {&by_model.try_emplace(model, UsageBucket{model}).first->second,
                      &by_day.try_emplace(day, UsageBucket{day}).first->second}) {
        ++b->requests;
        b->prompt_tokens += prompt;
        b->completion_tokens += completion;
        b->cost_usd += cost;
      }
    });
    std::vector<UsageBucket> models, days;
    for (auto& [label, b] : by_model) models.push_back(std::move(b));
    for (auto& [label, b] : by_day) days.push_back(std::move(b));
    return key_usage_from_buckets(name, std::move(models), std::move(days));
  }

  std::unordered_map<std::string, double> spend_by_key() override {
    std::unordered_map<std::string, double> out;
    paginate({{"TableName", records_},
              {"ConsistentRead", true},
              {"FilterExpression", "attribute_exists(#k) AND #k <> :none"},
              {"ProjectionExpression", "#k, #c"},
              {"ExpressionAttributeNames", {{"#k", "key_name"}, {"#c", "cost_usd"}}},
              {"ExpressionAttributeValues", {{":none", {{"S", ""}}}}}},
             [&](const json& item) {
               const std::string key = text_of(item, "key_name");
               out[key] += real_of(item, "cost_usd", url_ + ": a record of key \"" + key + "\"");
             });
    return out;
  }

  const std::string& url() const override { return url_; }

 private:
  json call(std::string_view action, const json& req) {
    try {
      const std::string answer = client_->call(action, req.dump(), timeout_, url_);
      return answer.empty() ? json::object() : json::parse(answer);
    } catch (const aws::JsonCallError& e) {
      throw_key_store_error(e);
    } catch (const json::exception&) {
      throw StoreError("dynamodb " + std::string(action) + " on " + url_ + ": the answer is not JSON", Failure::transient);
    }
  }

  // A Scan page by page (LastEvaluatedKey -> ExclusiveStartKey); `fn` sees every item.
  void paginate(json req, const std::function<void(const json&)>& fn) {
    for (;;) {
      const json page = call("Scan", req);
      for (const auto& item : page.value("Items", json::array())) fn(item);
      const auto last = page.find("LastEvaluatedKey");
      if (last == page.end() || last->empty()) return;
      req["ExclusiveStartKey"] = *last;
    }
  }

  // An attribute's S value ("" when absent; a wrong type is an error naming it).
  std::string text_of(const json& item, const char* name) const {
    const auto it = item.find(name);
    if (it == item.end()) return "";
    if (!it->is_object() || !it->contains("S") || !(*it)["S"].is_string())
      throw StoreError(url_ + ": attribute " + name + " is not a string (S)", Failure::permanent);
    return (*it)["S"].get<std::string>();
  }
  // An attribute's N value as text ("" when absent).
  std::string number_text(const json& item, const char* name, const std::string& where) const {
    const auto it = item.find(name);
    if (it == item.end()) return "";
    if (!it->is_object() || !it->contains("N") || !(*it)["N"].is_string())
      throw StoreError(where + ": attribute " + name + " is not a number (N)", Failure::permanent);
    return (*it)["N"].get<std::string>();
  }
  std::int64_t int_of(const json& item, const char* name, const std::string& where) const {
    const std::string t = number_text(item, name, where);
    if (t.empty()) return 0;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || end != t.data() + t.size())
      throw StoreError(where + ": attribute " + name + " is not an integer: " + t, Failure::permanent);
    return v;
  }
  double real_of(const json& item, const char* name, const std::string& where) const {
    const std::string t = number_text(item, name, where);
    return t.empty() ? 0.0 : real_from_text(t, where + ": attribute " + name);
  }

  ApiKey key_from_item(const json& item) const {
    ApiKey k;
    k.name = text_of(item, "name");
    const std::string where = url_ + ": key \"" + k.name + "\"";
    k.secret_hash = text_of(item, "secret_hash");
    k.rpm = int_of(item, "rpm", where);
    k.tpm = int_of(item, "tpm", where);
    if (const std::string b = number_text(item, "budget_usd", where); !b.empty()) k.budget_usd = real_from_text(b, where);
    if (const auto it = item.find("models"); it != item.end()) {
      if (!it->is_object() || !it->contains("L") || !(*it)["L"].is_array())
        throw StoreError(where + ": attribute models is not a list (L)", Failure::permanent);
      for (const auto& m : (*it)["L"]) {
        if (!m.is_object() || !m.contains("S") || !m["S"].is_string())
          throw StoreError(where + ": attribute models holds a value that is not a string (S)", Failure::permanent);
        k.models.push_back(m["S"].get<std::string>());
      }
    }
    k.created_unix = int_of(item, "created_unix", where);
    k.expires_unix = int_of(item, "expires_unix", where);
    k.revoked_unix = int_of(item, "revoked_unix", where);
    return k;
  }

  // DescribeTable: the keys table exists (or is made with create=1) and has its key.
  void open_table(bool create) {
    json table;
    try {
      table = json::parse(client_->call("DescribeTable", json{{"TableName", keys_}}.dump(), timeout_, url_)).value("Table", json::object());
    } catch (const aws::JsonCallError& e) {
      if (e.code() != "ResourceNotFoundException") throw_key_store_error(e);
      if (!create)
        throw StoreError(url_ + ": DynamoDB table \"" + keys_ + "\" (the key store's) does not exist in region " +
                             client_->endpoint().region + " at " + client_->endpoint().endpoint +
                             " (add create=1 to the URL to create it, or: " + keys_create_command(keys_) + ")",
                         Failure::permanent);
      try {
        (void)provision_keys_table(*client_, keys_, timeout_, kKeysTableWait, url_);
        return;
      } catch (const aws::JsonCallError& e2) {
        throw_key_store_error(e2);
      } catch (const std::runtime_error& e2) {
        throw StoreError(url_ + ": " + e2.what(), Failure::transient);
      }
    } catch (const json::exception&) {
      throw StoreError("dynamodb DescribeTable on " + url_ + ": the answer is not JSON", Failure::transient);
    }
    if (const std::string mismatch = keys_key_schema_mismatch(table); !mismatch.empty())
      throw StoreError(url_ + ": DynamoDB table \"" + keys_ + "\" " + mismatch, Failure::permanent);
  }

  std::shared_ptr<aws::JsonProtocolClient> client_;
  const std::string records_;  // the records table, whose items usage() sums
  const std::string keys_;     // <records>-keys
  const milliseconds timeout_;
  const std::string url_;
};

}  // namespace

std::string dynamodb_keys_table(const std::string& table) { return table + "-keys"; }

std::unique_ptr<ports::KeyStore> open_dynamodb_key_store(const ports::BackendUrl& u) {
  DynamoDbTarget t = dynamodb_target(u);
  if (dynamodb_keys_table(t.table).size() > 255)
    throw std::invalid_argument(u.describe("key store", "the table name leaves no room for its key table (" +
                                                            dynamodb_keys_table("TABLE") + ": at most 255 characters)"));
  return std::make_unique<DynamoDbKeyStore>(std::move(t));
}

}  // namespace overhead::backends
