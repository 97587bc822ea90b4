// How the sqs:// adapter classifies SQS answers, against a loopback server that answers the
// documented JSON 1.0 error shapes on purpose (no emulator throttles or refuses a signature):
// throttling and 5xx are retried and then transient, a refused signature is permanent with a hint,
// and no error or request carries the secret key.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "backends/open.hpp"
#include "loopback_server.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {
namespace {

constexpr const char* kSecret = "sqs-errors-test-secret-9f8e7d";

class SqsErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    aws::testing::use_test_keys("AKIDSQSERRORS", kSecret);
  }
  std::string url(const aws::testing::LoopbackServer& s) {
    return "sqs://work?region=eu-west-1&endpoint=" + s.url() + "&timeout_ms=2000";
  }
  // Answers GetQueueUrl and GetQueueAttributes (no redrive policy) as SQS does.
  static void answer_ok(const httplib::Request& req, httplib::Response& res) {
    const std::string target = req.get_header_value("X-Amz-Target");
    if (target == "AmazonSQS.GetQueueUrl")
      res.set_content(R"({"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/123456789012/work"})", "application/x-amz-json-1.0");
    else res.set_content(R"({"Attributes":{}})", "application/x-amz-json-1.0");
  }
};

TEST_F(SqsErrors, ThrottlingIsRetriedUntilItPasses) {
  aws::testing::LoopbackServer server;
  std::atomic<int> calls{0};
  server.http().Post("/", [&](const httplib::Request& req, httplib::Response& res) {
    if (++calls <= 2) {
      res.status = 400;
      res.set_content(R"({"__type":"com.amazonaws.sqs#ThrottlingException","message":"Rate exceeded"})",
                      "application/x-amz-json-1.0");
      return;
    }
    answer_ok(req, res);
  });
  server.start();
  auto q = open_queue(url(server));
  EXPECT_EQ(calls.load(), 4);  // two throttled GetQueueUrl, then GetQueueUrl and GetQueueAttributes
  EXPECT_EQ(q->dead_letter_queue(), nullptr);
}

TEST_F(SqsErrors, ServerErrorsThatPersistAreTransient) {
  aws::testing::LoopbackServer server;
  std::atomic<int> calls{0};
  server.http().Post("/", [&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.status = 503;
    res.set_content(R"({"__type":"com.amazonaws.sqs#ServiceUnavailable","message":"try later"})", "application/x-amz-json-1.0");
  });
  server.start();
  try {
    (void)open_queue(url(server));
    ADD_FAILURE() << "opened through a failing service";
  } catch (const ports::QueueError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("ServiceUnavailable"), std::string::npos) << e.what();
  }
  EXPECT_GT(calls.load(), 1);
}

TEST_F(SqsErrors, ABadSignatureIsPermanentAtOnceWithAHintAndNoSecret) {
  aws::testing::LoopbackServer server;
  std::atomic<int> calls{0};
  std::string authorization;
  server.http().Post("/", [&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    authorization = req.get_header_value("Authorization");
    res.status = 403;
    res.set_content(R"({"__type":"com.amazon.coral.service#InvalidSignatureException","message":"The request signature we calculated does not match"})",
                    "application/x-amz-json-1.0");
  });
  server.start();
  try {
    (void)open_queue(url(server));
    ADD_FAILURE() << "opened with a refused signature";
  } catch (const ports::QueueError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("InvalidSignatureException"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("check the access key"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(kSecret), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(authorization.starts_with("AWS4-HMAC-SHA256 Credential=AKIDSQSERRORS/")) << authorization;
  EXPECT_NE(authorization.find("/eu-west-1/sqs/aws4_request"), std::string::npos) << authorization;
  EXPECT_EQ(authorization.find(kSecret), std::string::npos);
}

// Two openers with create=1 race: ours finds no queue, the other creates it and sets its
// attributes, then our CreateQueue is refused (QueueNameExists). The queue the other made is the
// one we want: the opener takes its URL and sets the same attributes, and does not fail.
TEST_F(SqsErrors, ACreateRaceLostToAnotherOpenerOpensTheirQueue) {
  aws::testing::LoopbackServer server;
  std::atomic<int> get_url_calls{0}, creates{0}, set_attributes{0};
  server.http().Post("/", [&](const httplib::Request& req, httplib::Response& res) {
    const std::string target = req.get_header_value("X-Amz-Target");
    if (target == "AmazonSQS.GetQueueUrl" && ++get_url_calls == 1) {
      res.status = 400;
      res.set_content(R"({"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."})",
                      "application/x-amz-json-1.0");
    } else if (target == "AmazonSQS.CreateQueue") {
      ++creates;
      res.status = 400;
      res.set_content(R"({"__type":"com.amazonaws.sqs#QueueNameExists","message":"A queue already exists with the same name and a different value for attribute MessageRetentionPeriod"})",
                      "application/x-amz-json-1.0");
    } else {
      if (target == "AmazonSQS.SetQueueAttributes") ++set_attributes;
      answer_ok(req, res);
    }
  });
  server.start();
  auto q = open_queue(url(server) + "&create=1");
  EXPECT_NE(q, nullptr);
  EXPECT_EQ(creates.load(), 1);
  EXPECT_GE(get_url_calls.load(), 2);  // the first finds nothing; the next, after the refused create, the URL
  EXPECT_EQ(set_attributes.load(), 1);
}

}  // namespace
}  // namespace overhead::backends
