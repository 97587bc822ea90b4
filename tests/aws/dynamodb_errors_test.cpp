// How the dynamodb:// store handles what dynalite never answers: UnprocessedItems (resent alone,
// then reported per record), throttling and 5xx (retried, then transient), AccessDenied (permanent
// at once, with a hint, no secret), and a batch refused as invalid (written one by one so only the
// bad record fails). A loopback server answers the documented JSON 1.0 shapes on purpose.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "backends/open.hpp"
#include "loopback_server.hpp"
#include "ports/errors.hpp"
#include "ports/store.hpp"

namespace overhead::backends {
namespace {

using json = nlohmann::json;
ports::Record make_record(const std::string& experiment, const std::string& tokenizer, const std::string& id, int tokens) {
  ports::Record r;
  r.experiment = experiment;
  r.tokenizer = tokenizer;
  r.experiment_tokenizer = experiment + "#" + tokenizer;
  r.id = id;
  r.token_count = tokens;
  return r;
}

constexpr const char* kSecret = "dynamodb-errors-test-secret-5a4b3c";
constexpr const char* kJson = "application/x-amz-json-1.0";

// A DynamoDB that holds nothing and answers DescribeTable with the seed's keys; each test says
// what the write calls answer.
class DynamoDbErrors : public ::testing::Test {
 protected:
  using Handler = std::function<void(const std::string& action, const json& body, httplib::Response& res)>;

  void SetUp() override {
    aws::testing::use_test_keys("AKIDDDBERRORS", kSecret);
  }

  void serve(Handler writes) {
    server_.http().Post("/", [this, writes](const httplib::Request& req, httplib::Response& res) {
      const std::string target = req.get_header_value("X-Amz-Target");
      const std::string action = target.substr(target.find('.') + 1);
      const json body = json::parse(req.body);
      {
        std::lock_guard lock(mutex_);
        calls_.push_back({action, body});
        if (req.get_header_value("Authorization").find(kSecret) != std::string::npos) secret_sent_ = true;
      }
      if (action == "DescribeTable") {
        res.set_content(R"({"Table":{"TableName":"records","TableStatus":"ACTIVE",
          "AttributeDefinitions":[{"AttributeName":"experiment_tokenizer","AttributeType":"S"},{"AttributeName":"id","AttributeType":"S"}],
          "KeySchema":[{"AttributeName":"experiment_tokenizer","KeyType":"HASH"},{"AttributeName":"id","KeyType":"RANGE"}]}})",
                        kJson);
      } else if (action == "BatchGetItem") {
        if (unprocessed_gets_ > 0) {  // leave every key unprocessed
          --unprocessed_gets_;
          res.set_content(json{{"Responses", {{"records", json::array()}}}, {"UnprocessedKeys", body["RequestItems"]}}.dump(),
                          kJson);
          return;
        }
        res.set_content(R"({"Responses":{"records":[]},"UnprocessedKeys":{}})", kJson);
      } else {
        writes(action, body, res);
      }
    });
    server_.start();
  }

  std::unique_ptr<ports::Store> open() {
    return open_store("dynamodb://records?region=eu-west-1&endpoint=" + server_.url() + "&timeout_ms=2000");
  }

  std::vector<std::pair<std::string, json>> calls(const std::string& action) {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<std::string, json>> out;
    for (const auto& c : calls_)
      if (c.first == action) out.push_back(c);
    return out;
  }

  static void error(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    res.set_content(json{{"__type", "com.amazonaws.dynamodb.v20120810#" + code}, {"message", message}}.dump(), kJson);
  }

  static std::vector<ports::Record> batch(int n) {
    std::vector<ports::Record> out;
    for (int i = 0; i < n; ++i) out.push_back(make_record("e", "t", "r" + std::to_string(i), i));
    return out;
  }

  aws::testing::LoopbackServer server_;
  std::mutex mutex_;
  std::vector<std::pair<std::string, json>> calls_;
  bool secret_sent_ = false;
  std::atomic<int> unprocessed_gets_{0};
};

std::vector<std::string> ids_of(const json& batch_write_body) {
  std::vector<std::string> ids;
  for (const auto& r : batch_write_body.at("RequestItems").at("records"))
    ids.push_back(r.at("PutRequest").at("Item").at("id").at("S").get<std::string>());
  return ids;
}

TEST_F(DynamoDbErrors, UnprocessedItemsAreResentAloneUntilStored) {
  std::atomic<int> writes{0};
  serve([&](const std::string&, const json& body, httplib::Response& res) {
    json left = json::array();
    if (++writes == 1)  // the first answer leaves the last two items unprocessed
      for (std::size_t i = 3; i < body["RequestItems"]["records"].size(); ++i) left.push_back(body["RequestItems"]["records"][i]);
    res.set_content(json{{"UnprocessedItems", left.empty() ? json::object() : json{{"records", left}}}}.dump(), kJson);
  });
  const auto store = open();
  EXPECT_TRUE(store->upsert_batch(batch(5)).empty());
  const auto sent = calls("BatchWriteItem");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(ids_of(sent[0].second), (std::vector<std::string>{"r0", "r1", "r2", "r3", "r4"}));
  EXPECT_EQ(ids_of(sent[1].second), (std::vector<std::string>{"r3", "r4"}));
  // The resent items are the same items, every attribute with its type.
  EXPECT_EQ(sent[1].second["RequestItems"]["records"][0], sent[0].second["RequestItems"]["records"][3]);
  EXPECT_FALSE(secret_sent_);
}

TEST_F(DynamoDbErrors, ItemsLeftUnprocessedAfterTheRetriesFailAloneAndRetryable) {
  serve([&](const std::string&, const json& body, httplib::Response& res) {
    json left = json::array();
    for (const auto& r : body["RequestItems"]["records"])
      if (r["PutRequest"]["Item"]["id"]["S"] == "r1") left.push_back(r);
    res.set_content(json{{"UnprocessedItems", left.empty() ? json::object() : json{{"records", left}}}}.dump(), kJson);
  });
  const auto store = open();
  const auto failures = store->upsert_batch(batch(3));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].index, 1u);
  EXPECT_TRUE(failures[0].failure.retryable);
  EXPECT_NE(failures[0].failure.message.find("unprocessed"), std::string::npos) << failures[0].failure.message;
  EXPECT_EQ(calls("BatchWriteItem").size(), 5u);  // the policy's attempts, first included
}

TEST_F(DynamoDbErrors, UnprocessedKeysOfTheStoredKeysReadAreAskedForAgain) {
  unprocessed_gets_ = 2;
  serve([&](const std::string&, const json&, httplib::Response& res) { res.set_content(R"({"UnprocessedItems":{}})", kJson); });
  EXPECT_TRUE(open()->upsert_batch(batch(3)).empty());
  const auto gets = calls("BatchGetItem");
  ASSERT_EQ(gets.size(), 3u);
  EXPECT_EQ(gets[2].second["RequestItems"]["records"]["Keys"].size(), 3u);
  EXPECT_EQ(calls("BatchWriteItem").size(), 1u);  // none stored: one put of all three
  EXPECT_TRUE(calls("UpdateItem").empty());
}

TEST_F(DynamoDbErrors, KeysLeftUnreadAfterTheRetriesGoInByUpdateItem) {
  unprocessed_gets_ = 100;
  serve([&](const std::string&, const json&, httplib::Response& res) { res.set_content("{}", kJson); });
  EXPECT_TRUE(open()->upsert_batch(batch(2)).empty());
  EXPECT_TRUE(calls("BatchWriteItem").empty());  // could be stored: the path that keeps stamps
  EXPECT_EQ(calls("UpdateItem").size(), 2u);
}

TEST_F(DynamoDbErrors, ThrottlingIsRetriedUntilItPasses) {
  std::atomic<int> writes{0};
  serve([&](const std::string&, const json&, httplib::Response& res) {
    if (++writes <= 2) return error(res, 400, "ProvisionedThroughputExceededException", "slow down");
    res.set_content(R"({"UnprocessedItems":{}})", kJson);
  });
  EXPECT_TRUE(open()->upsert_batch(batch(2)).empty());
  EXPECT_EQ(writes.load(), 3);
}

TEST_F(DynamoDbErrors, ServerErrorsThatPersistAreTransient) {
  serve([&](const std::string&, const json&, httplib::Response& res) {
    error(res, 500, "InternalServerError", "internal error");
  });
  const auto store = open();
  try {
    store->upsert(make_record("e", "t", "1", 1));
    ADD_FAILURE() << "stored through a failing service";
  } catch (const ports::StoreError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("InternalServerError"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls("PutItem").size(), 5u);
}

TEST_F(DynamoDbErrors, AccessDeniedIsPermanentAtOnceWithAHintAndNoSecret) {
  serve([&](const std::string&, const json&, httplib::Response& res) {
    error(res, 400, "AccessDeniedException", "User is not authorized to perform: dynamodb:BatchWriteItem");
  });
  const auto store = open();
  try {
    (void)store->upsert_batch(batch(2));
    ADD_FAILURE() << "stored without access";
  } catch (const ports::StoreError& e) {
    const std::string m = e.what();
    EXPECT_FALSE(e.retryable()) << m;
    EXPECT_NE(m.find("AccessDeniedException"), std::string::npos) << m;
    EXPECT_NE(m.find("IAM policy"), std::string::npos) << m;
    EXPECT_EQ(m.find(kSecret), std::string::npos) << m;
  }
  EXPECT_EQ(calls("BatchWriteItem").size(), 1u);
  EXPECT_FALSE(secret_sent_);
}

TEST_F(DynamoDbErrors, ABatchRefusedAsInvalidIsWrittenOneByOneSoOnlyTheBadRecordFails) {
  serve([&](const std::string& action, const json& body, httplib::Response& res) {
    if (action == "BatchWriteItem") return error(res, 400, "ValidationException", "One or more parameter values were invalid");
    if (body["Item"]["id"]["S"] == "r2") return error(res, 400, "ValidationException", "Item has an invalid attribute");
    res.set_content("{}", kJson);
  });
  const auto failures = open()->upsert_batch(batch(4));
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].index, 2u);
  EXPECT_FALSE(failures[0].failure.retryable);
  EXPECT_EQ(calls("PutItem").size(), 4u);
}

TEST_F(DynamoDbErrors, AMissingTableAtWriteTimeIsPermanentWithAHint) {
  serve([&](const std::string&, const json&, httplib::Response& res) {
    error(res, 400, "ResourceNotFoundException", "Requested resource not found");
  });
  try {
    open()->upsert(make_record("e", "t", "1", 1));
    ADD_FAILURE() << "stored into a missing table";
  } catch (const ports::StoreError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("create=1"), std::string::npos) << e.what();
  }
}

TEST_F(DynamoDbErrors, ATableWithOtherKeysIsRefusedWhenOpened) {
  server_.http().Post("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"Table":{"TableName":"records","TableStatus":"ACTIVE",
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]}})",
                    kJson);
  });
  server_.start();
  try {
    (void)open();
    ADD_FAILURE() << "opened a table with other keys";
  } catch (const ports::StoreError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("hash key experiment_tokenizer (S) and range key id (S)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace overhead::backends
