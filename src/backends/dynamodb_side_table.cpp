#include "backends/dynamodb_side_table.hpp"

#include <charconv>
#include <stdexcept>

#include "aws/json_protocol.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {
namespace {

using json = nlohmann::json;
using ports::Failure;
using ports::StoreError;
using std::chrono::milliseconds;

constexpr milliseconds kSideTableWait{120000};  // how long create=1 waits for ACTIVE
constexpr std::size_t kMaxTableName = 255;

std::string side_table_hint(const std::string& code) {
  if (code == "ResourceNotFoundException") return " (check the table name and the region; create=1 in the URL creates the table)";
  if (code.find("AccessDenied") != std::string::npos)
    return " (check that the IAM policy allows this DynamoDB action on the table)";
  if (code == "UnrecognizedClientException" || code == "InvalidSignatureException" || code == "ExpiredTokenException")
    return " (check the access key, the secret, the session token and the region)";
  if (code == "credentials")
    return " (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with an instance role)";
  return "";
}

const json& typed_value(const json& item, const char* name, const char* type, const char* type_name, const std::string& where) {
  static const json none;
  const auto it = item.find(name);
  if (it == item.end()) return none;
  if (!it->is_object() || !it->contains(type))
    throw StoreError(where + ": attribute " + name + " is not " + type_name + " (" + type + ")", Failure::permanent);
  return (*it)[type];
}

}  // namespace

std::string dynamodb_side_table_name(const ports::BackendUrl& url, const std::string& records, std::string_view suffix,
                                     std::string_view role) {
  if (records.size() + suffix.size() > kMaxTableName)
    throw std::invalid_argument(url.describe(role, "the table name leaves no room for its " + std::string(role) + " table (TABLE" +
                                                       std::string(suffix) + ": at most 255 characters)"));
  return records + std::string(suffix);
}

DynamoDbSideTable::DynamoDbSideTable(const DynamoDbTarget& target, std::string name, const Shape& shape)
    : client_(target.client), name_(std::move(name)), timeout_(target.call_timeout), url_(target.shown) {
  json table;
  try {
    table = json::parse(client_->call("DescribeTable", json{{"TableName", name_}}.dump(), timeout_, url_)).value("Table", json::object());
  } catch (const aws::JsonCallError& e) {
    if (e.code() != "ResourceNotFoundException") fail("DescribeTable", e);
    if (!target.create)
      throw StoreError(url_ + ": DynamoDB table \"" + name_ + "\" (the " + shape.role + "'s) does not exist in region " +
                           client_->endpoint().region + " at " + client_->endpoint().endpoint +
                           " (add create=1 to the URL to create it, or: " + shape.create_command + ")",
                       Failure::permanent);
    try {
      (void)shape.provision(*client_, name_, timeout_, kSideTableWait, url_);
      return;
    } catch (const aws::JsonCallError& e2) {
      fail("CreateTable", e2);
    } catch (const std::runtime_error& e2) {
      throw StoreError(url_ + ": " + e2.what(), Failure::transient);
    }
  } catch (const json::exception& e) {
    fail("DescribeTable", e);
  }
  if (const std::string mismatch = shape.mismatch(table); !mismatch.empty())
    throw StoreError(url_ + ": DynamoDB table \"" + name_ + "\" " + mismatch, Failure::permanent);
}

void DynamoDbSideTable::fail(std::string_view action, const std::exception& e) const {
  if (const auto* call_error = dynamic_cast<const aws::JsonCallError*>(&e))
    throw StoreError(call_error->what() + side_table_hint(call_error->code()),
                     call_error->transient() ? Failure::transient : Failure::permanent);
  throw StoreError("dynamodb " + std::string(action) + " on " + url_ + ": the answer is not JSON", Failure::transient);
}

json DynamoDbSideTable::call(std::string_view action, const json& request) const {
  try {
    const std::string answer = client_->call(action, request.dump(), timeout_, url_);
    return answer.empty() ? json::object() : json::parse(answer);
  } catch (const aws::JsonCallError& e) {
    fail(action, e);
  } catch (const json::exception& e) {
    fail(action, e);
  }
}

bool DynamoDbSideTable::call_if(std::string_view action, const json& request) const {
  try {
    (void)client_->call(action, request.dump(), timeout_, url_);
    return true;
  } catch (const aws::JsonCallError& e) {
    if (e.code() == "ConditionalCheckFailedException") return false;
    fail(action, e);
  }
}

void DynamoDbSideTable::paginate(std::string_view action, json request, const std::function<void(const json&)>& fn) const {
  for (;;) {
    const json page = call(action, request);
    for (const auto& item : page.value("Items", json::array())) fn(item);
    const auto last = page.find("LastEvaluatedKey");
    if (last == page.end() || last->empty()) return;
    request["ExclusiveStartKey"] = *last;
  }
}

std::string dynamodb_text(const json& item, const char* name, const std::string& where) {
  const json& v = typed_value(item, name, "S", "a string", where);
  if (v.is_null()) return "";
  if (!v.is_string()) throw StoreError(where + ": attribute " + name + " is not a string (S)", Failure::permanent);
  return v.get<std::string>();
}

std::string dynamodb_number_text(const json& item, const char* name, const std::string& where) {
  const json& v = typed_value(item, name, "N", "a number", where);
  if (v.is_null()) return "";
  if (!v.is_string()) throw StoreError(where + ": attribute " + name + " is not a number (N)", Failure::permanent);
  return v.get<std::string>();
}

std::int64_t dynamodb_int(const json& item, const char* name, const std::string& where) {
  const std::string t = dynamodb_number_text(item, name, where);
  if (t.empty()) return 0;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size())
    throw StoreError(where + ": attribute " + name + " is not an integer: " + t, Failure::permanent);
  return v;
}

bool dynamodb_bool(const json& item, const char* name, const std::string& where) {
  const json& v = typed_value(item, name, "BOOL", "a boolean", where);
  if (v.is_null()) return false;
  if (!v.is_boolean()) throw StoreError(where + ": attribute " + name + " is not a boolean (BOOL)", Failure::permanent);
  return v.get<bool>();
}

}  // namespace overhead::backends
