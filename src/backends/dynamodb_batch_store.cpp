// DynamoDbBatchStore: the dynamodb:// batch store (see dynamodb_batch_store.hpp for the calls it makes).
#include "backends/dynamodb_batch_store.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "backends/dynamodb_item.hpp"
#include "backends/dynamodb_side_table.hpp"

namespace overhead::backends {
namespace {

using json = nlohmann::json;
using ports::BatchDocument;
using ports::BatchKind;
using ports::Failure;
using ports::StoreError;

constexpr std::size_t kRankDigits = 20;
constexpr std::size_t kMaxRangeKeyBytes = 1024;
constexpr std::size_t kItemOverheadBytes = 128;  // the attribute names, the kind, created_at and open
constexpr int kMaxQueryPage = 1000;

std::string batches_create_command(const std::string& table) {
  return "aws dynamodb create-table --table-name " + table +
         " --attribute-definitions AttributeName=kind,AttributeType=S AttributeName=id,AttributeType=S"
         " AttributeName=rank,AttributeType=S AttributeName=open_rank,AttributeType=S"
         " --key-schema AttributeName=kind,KeyType=HASH AttributeName=id,KeyType=RANGE"
         " --local-secondary-indexes"
         " 'IndexName=newest,KeySchema=[{AttributeName=kind,KeyType=HASH},{AttributeName=rank,KeyType=RANGE}],"
         "Projection={ProjectionType=ALL}'"
         " 'IndexName=open,KeySchema=[{AttributeName=kind,KeyType=HASH},{AttributeName=open_rank,KeyType=RANGE}],"
         "Projection={ProjectionType=ALL}'"
         " --billing-mode PAY_PER_REQUEST";
}

const char* kind_name(BatchKind kind) { return kind == BatchKind::file ? "file" : "batch"; }

// The sign bit flipped makes the unsigned order the signed one; fixed width makes the text order
// the number's, and the id after it breaks ties in byte order, as the other stores do.
std::string rank_of(const BatchDocument& doc) {
  const auto biased = static_cast<std::uint64_t>(doc.created_at) ^ (std::uint64_t{1} << 63);
  char digits[kRankDigits + 1];
  std::snprintf(digits, sizeof digits, "%020" PRIu64, biased);
  return std::string(digits) + doc.id;
}

json key_of(BatchKind kind, const std::string& id) { return {{"kind", {{"S", kind_name(kind)}}}, {"id", {{"S", id}}}}; }

class DynamoDbBatchStore final : public ports::BatchStore {
 public:
  DynamoDbBatchStore(const DynamoDbTarget& target, std::string table)
      : table_(target, table, {"batch store", &provision_batches_table, &batches_key_schema_mismatch, batches_create_command(table)}) {}

  void put(BatchKind kind, const BatchDocument& doc) override {
    const std::string rank = rank_of(doc);
    if (rank.size() > kMaxRangeKeyBytes)
      throw StoreError(url() + ": batch document id of " + std::to_string(doc.id.size()) + " bytes is over DynamoDB's key limit (" +
                           std::to_string(kMaxRangeKeyBytes - kRankDigits) + ")",
                       Failure::permanent);
    if (doc.body.size() + 3 * rank.size() + kItemOverheadBytes > kDynamoDbMaxItemBytes)
      throw StoreError(url() + ": batch document \"" + doc.id + "\" of " + std::to_string(doc.body.size()) +
                           " bytes does not fit a DynamoDB item (400 KB)",
                       Failure::permanent);
    json item = key_of(kind, doc.id);
    item["created_at"] = dynamodb_int_value(doc.created_at);
    item["open"] = {{"BOOL", doc.open}};
    item["body"] = {{"S", doc.body}};
    item["rank"] = {{"S", rank}};
    if (doc.open) item["open_rank"] = {{"S", rank}};
    (void)table_.call("PutItem", {{"TableName", table_.name()}, {"Item", std::move(item)}});
  }

  std::optional<BatchDocument> get(BatchKind kind, const std::string& id) override {
    const json answer = table_.call("GetItem", {{"TableName", table_.name()}, {"Key", key_of(kind, id)}, {"ConsistentRead", true}});
    const auto item = answer.find("Item");
    if (item == answer.end() || item->empty()) return std::nullopt;
    return document_of(*item);
  }

  bool remove(BatchKind kind, const std::string& id) override {
    return table_.call_if("DeleteItem", {{"TableName", table_.name()},
                                         {"Key", key_of(kind, id)},
                                         {"ConditionExpression", "attribute_exists(#i)"},
                                         {"ExpressionAttributeNames", {{"#i", "id"}}}});
  }

  std::vector<BatchDocument> list(BatchKind kind, const std::string& after, std::size_t limit) override {
    std::vector<BatchDocument> out;
    if (limit == 0) return out;
    json req = query_of(kind, kBatchesNewestIndex);
    req["ScanIndexForward"] = false;
    if (!after.empty()) {
      const json from = table_.call("GetItem", {{"TableName", table_.name()},
                                                {"Key", key_of(kind, after)},
                                                {"ConsistentRead", true},
                                                {"ProjectionExpression", "#r"},
                                                {"ExpressionAttributeNames", {{"#r", "rank"}}}});
      if (const auto item = from.find("Item"); item != from.end() && !item->empty()) {
        req["KeyConditionExpression"] = "#k = :k AND #r < :r";
        req["ExpressionAttributeNames"]["#r"] = "rank";
        req["ExpressionAttributeValues"][":r"] = {{"S", dynamodb_text(*item, "rank", url())}};
      }
    }
    // Page by page until `limit` documents: a page holds at most what is still wanted.
    for (;;) {
      req["Limit"] = static_cast<int>(std::min<std::size_t>(limit - out.size(), kMaxQueryPage));
      const json page = table_.call("Query", req);
      for (const auto& item : page.value("Items", json::array())) out.push_back(document_of(item));
      const auto last = page.find("LastEvaluatedKey");
      if (out.size() >= limit || last == page.end() || last->empty()) break;
      req["ExclusiveStartKey"] = *last;
    }
    if (out.size() > limit) out.resize(limit);
    return out;
  }

  std::vector<BatchDocument> open_batches() override {
    std::vector<BatchDocument> out;
    table_.paginate("Query", query_of(BatchKind::batch, kBatchesOpenIndex), [&](const json& item) { out.push_back(document_of(item)); });
    return out;
  }

  const std::string& url() const override { return table_.url(); }

 private:
  json query_of(BatchKind kind, const char* index) const {
    return {{"TableName", table_.name()},
            {"IndexName", index},
            {"ConsistentRead", true},
            {"KeyConditionExpression", "#k = :k"},
            {"ExpressionAttributeNames", {{"#k", "kind"}}},
            {"ExpressionAttributeValues", {{":k", {{"S", kind_name(kind)}}}}}};
  }

  BatchDocument document_of(const json& item) const {
    BatchDocument d;
    d.id = dynamodb_text(item, "id", url());
    const std::string where = url() + ": batch document \"" + d.id + "\"";
    d.created_at = dynamodb_int(item, "created_at", where);
    d.open = dynamodb_bool(item, "open", where);
    d.body = dynamodb_text(item, "body", where);
    return d;
  }

  DynamoDbSideTable table_;  // <records>-batches
};

}  // namespace

std::unique_ptr<ports::BatchStore> open_dynamodb_batch_store(const ports::BackendUrl& u) {
  const DynamoDbTarget t = dynamodb_target(u);
  return std::make_unique<DynamoDbBatchStore>(t, dynamodb_side_table_name(u, t.table, kBatchesTableSuffix, "batch store"));
}

}  // namespace overhead::backends
