// DynamoDbKeyStore: the dynamodb:// key store (see dynamodb_key_store.hpp for the calls it makes).
#include "backends/dynamodb_key_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "backends/dynamodb_side_table.hpp"
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


std::string keys_create_command(const std::string& table) {
  return "aws dynamodb create-table --table-name " + table +
         " --attribute-definitions AttributeName=name,AttributeType=S --key-schema AttributeName=name,KeyType=HASH"
         " --billing-mode PAY_PER_REQUEST";
}

class DynamoDbKeyStore final : public ports::KeyStore {
 public:
  DynamoDbKeyStore(const DynamoDbTarget& target, const std::string& keys_table)
      : keys_(target, keys_table, {"key store", &provision_keys_table, &keys_key_schema_mismatch, keys_create_command(keys_table)}),
        records_(target.table) {}

  void create(const ApiKey& key) override {
    json item = {{"name", {{"S", key.name}}},
                 {"secret_hash", {{"S", key.secret_hash}}},
                 {"rpm", dynamodb_int_value(key.rpm)},
                 {"tpm", dynamodb_int_value(key.tpm)},
                 {"models", {{"L", json::array()}}},
                 {"created_unix", dynamodb_int_value(key.created_unix)},
                 {"expires_unix", dynamodb_int_value(key.expires_unix)},
                 {"revoked_unix", dynamodb_int_value(key.revoked_unix)}};
    if (key.budget_usd) item["budget_usd"] = {{"N", util::shortest_double_text(*key.budget_usd)}};
    for (const auto& m : key.models) item["models"]["L"].push_back({{"S", m}});
    const json req = {{"TableName", keys_.name()},
                      {"Item", item},
                      {"ConditionExpression", "attribute_not_exists(#n)"},
                      {"ExpressionAttributeNames", {{"#n", "name"}}}};
    if (!keys_.call_if("PutItem", req)) throw KeyExistsError(url() + ": a key named \"" + key.name + "\" exists already");
  }

  std::vector<ApiKey> list() override {
    std::vector<ApiKey> keys;
    keys_.paginate("Scan", {{"TableName", keys_.name()}, {"ConsistentRead", true}},
                   [&](const json& item) { keys.push_back(key_from_item(item)); });
    std::sort(keys.begin(), keys.end(), [](const ApiKey& a, const ApiKey& b) { return a.name < b.name; });
    return keys;
  }

  bool revoke(const std::string& name, std::int64_t now_unix) override {
    const json req = {{"TableName", keys_.name()},
                      {"Key", {{"name", {{"S", name}}}}},
                      {"UpdateExpression", "SET #r = :now"},
                      {"ConditionExpression", "attribute_exists(#n) AND #r = :zero"},
                      {"ExpressionAttributeNames", {{"#n", "name"}, {"#r", "revoked_unix"}}},
                      {"ExpressionAttributeValues", {{":now", dynamodb_int_value(now_unix)}, {":zero", dynamodb_int_value(0)}}}};
    return keys_.call_if("UpdateItem", req);
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
    const std::string where = url() + ": a record of key \"" + name + "\"";
    keys_.paginate("Scan", std::move(req), [&](const json& item) {
      const std::string model = dynamodb_text(item, "model", url());
      const std::string day(start_day(dynamodb_text(item, "start_time", url())));
      const std::int64_t prompt = dynamodb_int(item, "token_count", where), completion = dynamodb_int(item, "output_tokens", where);
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
    keys_.paginate("Scan",
                   {{"TableName", records_},
                    {"ConsistentRead", true},
                    {"FilterExpression", "attribute_exists(#k) AND #k <> :none"},
                    {"ProjectionExpression", "#k, #c"},
                    {"ExpressionAttributeNames", {{"#k", "key_name"}, {"#c", "cost_usd"}}},
                    {"ExpressionAttributeValues", {{":none", {{"S", ""}}}}}},
                   [&](const json& item) {
                     const std::string key = dynamodb_text(item, "key_name", url());
                     out[key] += real_of(item, "cost_usd", url() + ": a record of key \"" + key + "\"");
                   });
    return out;
  }

  const std::string& url() const override { return keys_.url(); }

 private:
  double real_of(const json& item, const char* name, const std::string& where) const {
    const std::string t = dynamodb_number_text(item, name, where);
    return t.empty() ? 0.0 : real_from_text(t, where + ": attribute " + name);
  }

  ApiKey key_from_item(const json& item) const {
    ApiKey k;
    k.name = dynamodb_text(item, "name", url());
    const std::string where = url() + ": key \"" + k.name + "\"";
    k.secret_hash = dynamodb_text(item, "secret_hash", url());
    k.rpm = dynamodb_int(item, "rpm", where);
    k.tpm = dynamodb_int(item, "tpm", where);
    if (const std::string b = dynamodb_number_text(item, "budget_usd", where); !b.empty()) k.budget_usd = real_from_text(b, where);
    if (const auto it = item.find("models"); it != item.end()) {
      if (!it->is_object() || !it->contains("L") || !(*it)["L"].is_array())
        throw StoreError(where + ": attribute models is not a list (L)", Failure::permanent);
      for (const auto& m : (*it)["L"]) {
        if (!m.is_object() || !m.contains("S") || !m["S"].is_string())
          throw StoreError(where + ": attribute models holds a value that is not a string (S)", Failure::permanent);
        k.models.push_back(m["S"].get<std::string>());
      }
    }
    k.created_unix = dynamodb_int(item, "created_unix", where);
    k.expires_unix = dynamodb_int(item, "expires_unix", where);
    k.revoked_unix = dynamodb_int(item, "revoked_unix", where);
    return k;
  }

  DynamoDbSideTable keys_;     // <records>-keys
  const std::string records_;  // the records table, whose items usage() sums
};

}  // namespace

std::string dynamodb_keys_table(const std::string& table) { return table + std::string(kKeysTableSuffix); }

std::unique_ptr<ports::KeyStore> open_dynamodb_key_store(const ports::BackendUrl& u) {
  const DynamoDbTarget t = dynamodb_target(u);
  return std::make_unique<DynamoDbKeyStore>(t, dynamodb_side_table_name(u, t.table, kKeysTableSuffix, "key store"));
}

}  // namespace overhead::backends
