// The queue contract (contract/queue_contract.hpp) against the local-aws-sqs emulator through the
// sqs:// adapter, and what is particular to it: how it classifies failures and what its errors show.
//
// The emulator is the CTest fixture `aws_emulators` (scripts/services/aws_emulators.sh); its env
// file is named by OVERHEAD_AWS_ENV and read when a test first needs it. SQS counts visibility in
// whole seconds, so the suite runs on a real clock scaled by 10 (the contract's 100 ms becomes 1 s).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/queue.hpp"
#include "queue_contract.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

using std::chrono::milliseconds;

std::string aws_env(const std::string& key) { return test_services::service_env("OVERHEAD_AWS_ENV", key); }

std::string fresh_queue() { return test_services::unique_name("contract-"); }

std::string sqs_url(const std::string& name, const std::string& params) {
  return "sqs://" + name + "?region=" + aws_env("AWS_EMULATOR_REGION") + "&endpoint=" + aws_env("AWS_SQS_ENDPOINT") +
         (params.empty() ? "" : "&" + params);
}

pipe::contract::QueueBackend sqs_backend() {
  auto backend = pipe::contract::url_queue_backend(
      "sqs", [](int, const std::string& params) { return sqs_url(fresh_queue(), "create=1&" + params); }, 10.0);
  // What local-aws-sqs 2.0.2 gets wrong (checked with plain JSON calls, no adapter involved).
  backend.server_gaps = {
      {"ReceiveTakesAtMostMaxAndHidesWhatItTook",
       "local-aws-sqs 2.0.2 counts in-flight messages in ApproximateNumberOfMessages as well as in "
       "ApproximateNumberOfMessagesNotVisible"},
      {"StatusShowsWaitingInFlightAndDeadLetters",
       "local-aws-sqs 2.0.2 counts in-flight messages in ApproximateNumberOfMessages as well as in "
       "ApproximateNumberOfMessagesNotVisible"},
      {"ExtendVisibilityPostponesRedelivery",
       "local-aws-sqs 2.0.2 raises ApproximateReceiveCount on ChangeMessageVisibility, so a redelivery after an "
       "extension reports 3 receives instead of 2"},
  };
  return backend;
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(Sqs, QueueSemantics, ::testing::Values(backends::sqs_backend()), QueueBackendName{});
}  // namespace overhead::pipe::contract

namespace overhead::backends {
namespace {

TEST(SqsQueue, UnknownQueueIsPermanentWithAHint) {
  try {
    (void)open_queue(sqs_url(fresh_queue(), ""));
    ADD_FAILURE() << "opened a queue that does not exist";
  } catch (const ports::QueueError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_NE(std::string(e.what()).find("QueueDoesNotExist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("check the queue name"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(std::getenv("AWS_SECRET_ACCESS_KEY")), std::string::npos) << e.what();
  }
}

TEST(SqsQueue, UnreachableEndpointIsTransient) {
  try {
    (void)open_queue("sqs://q?region=us-east-1&endpoint=http://127.0.0.1:1&timeout_ms=500&create=1");
    ADD_FAILURE() << "opened a queue on a closed port";
  } catch (const ports::QueueError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
  }
}

TEST(SqsQueue, BadUrlsAreClearErrors) {
  EXPECT_THROW((void)open_queue(sqs_url("q", "visiblity_ms=5")), std::invalid_argument);  // misspelt
  EXPECT_THROW((void)open_queue(sqs_url("q", "wait_s=21")), std::invalid_argument);
  EXPECT_THROW((void)open_queue("sqs://q?region=us-east-1&endpoint=ftp://x"), std::invalid_argument);
}

TEST(SqsQueue, ReceiveCountComesFromApproximateReceiveCount) {
  auto q = open_queue(sqs_url(fresh_queue(), "create=1&visibility_ms=1000"));
  (void)q->send_batch(std::vector<std::string>{"again"});
  auto first = q->receive(1, milliseconds(0));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].receive_count, 1);
  // Redelivery by expiry, not by ChangeMessageVisibility (which local-aws-sqs counts as a receive).
  std::this_thread::sleep_for(milliseconds(1200));
  auto second = q->receive(1, milliseconds(0));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].receive_count, 2);
  EXPECT_EQ(second[0].id, first[0].id);
}

// Processes that start together with create=1 (workers and consumers of one run) all open the
// one queue and its DLQ, whoever creates them.
TEST(SqsQueue, OpenersThatCreateTheSameQueueAtOnceAllSucceed) {
  const std::string name = fresh_queue();
  constexpr int kOpeners = 6;
  std::atomic<int> opened{0};
  std::vector<std::string> errors(kOpeners);
  std::vector<std::thread> openers;
  for (int i = 0; i < kOpeners; ++i)
    openers.emplace_back([&, i] {
      try {
        auto q = open_queue(sqs_url(name, "create=1&visibility_ms=2000&max_receives=3"));
        if (q->dead_letter_queue() != nullptr) ++opened;
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : openers) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(opened.load(), kOpeners);
}

}  // namespace
}  // namespace overhead::backends
