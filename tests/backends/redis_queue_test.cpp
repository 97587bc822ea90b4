// The queue contract (contract/queue_contract.hpp) against a real redis-server, and what is
// particular to the Redis adapter: the URL it shows, and how it classifies failures.
//
// The server is the CTest fixture `redis` (scripts/services/redis.sh); its env file is named by
// OVERHEAD_REDIS_ENV and read when a test first needs it, so listing the tests needs no server.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/queue.hpp"
#include "queue_contract.hpp"
#include "queue_family_contract.hpp"
#include "service_env.hpp"

namespace overhead::backends {
namespace {

using std::chrono::milliseconds;

// KEY's value in the env file, e.g. REDIS_URL; throws naming the file when it is missing.
std::string redis_env(const std::string& key) { return test_services::service_env("OVERHEAD_REDIS_ENV", key); }

// A stream name no other call in this or an earlier run (the server keeps its data) has used:
// the suite's `n` restarts in every test, so it cannot tell streams apart on its own.
std::string fresh_stream() { return test_services::unique_name("contract-"); }

pipe::contract::QueueBackend redis_backend() {
  return pipe::contract::url_queue_backend(
      "redis", [](int, const std::string& params) { return redis_env("REDIS_URL") + "/" + fresh_stream() + "?" + params; },
      1.0);
}

}  // namespace
}  // namespace overhead::backends

namespace overhead::pipe::contract {
INSTANTIATE_TEST_SUITE_P(Redis, QueueSemantics, ::testing::Values(backends::redis_backend()), QueueBackendName{});
INSTANTIATE_TEST_SUITE_P(Redis, QueueFamilySemantics,
                         ::testing::Values(QueueFamilyBackend{"redis", true,
                                                              [](const std::filesystem::path&, const std::string& q) {
                                                                return backends::redis_env("REDIS_URL") + "/" + q;
                                                              }}),
                         QueueFamilyBackendName{});
}  // namespace overhead::pipe::contract

namespace overhead::backends {
namespace {

TEST(RedisQueue, UrlHidesThePassword) {
  const std::string password = redis_env("REDIS_PASSWORD");
  auto q = open_queue(redis_env("REDIS_URL") + "/" + fresh_stream());
  EXPECT_EQ(q->url().find(password), std::string::npos);
  EXPECT_NE(q->url().find("***"), std::string::npos);
}

TEST(RedisQueue, WrongPasswordIsPermanentAndNotShown) {
  const std::string url = "redis://default:not-the-password@127.0.0.1:" + redis_env("REDIS_PORT") + "/" + fresh_stream();
  try {
    (void)open_queue(url);
    ADD_FAILURE() << "opened with a wrong password";
  } catch (const ports::QueueError& e) {
    EXPECT_FALSE(e.retryable()) << e.what();
    EXPECT_EQ(std::string(e.what()).find("not-the-password"), std::string::npos) << e.what();
  }
}

TEST(RedisQueue, UnreachableServerIsTransient) {
  // Port 1 on loopback: nothing listens there, so the connect is refused at once.
  try {
    (void)open_queue("redis://127.0.0.1:1/" + fresh_stream() + "?connect_timeout_ms=500");
    ADD_FAILURE() << "opened a queue on a closed port";
  } catch (const ports::QueueError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
  }
}

TEST(RedisQueue, BadUrlsAreClearErrors) {
  const std::string base = redis_env("REDIS_URL");
  EXPECT_THROW((void)open_queue(base + "/s?visiblity_ms=5"), std::invalid_argument);  // misspelt
  EXPECT_THROW((void)open_queue(base + "/s?visibility_ms=-1"), std::invalid_argument);
  EXPECT_THROW((void)open_queue(base), std::invalid_argument);  // no stream
}

TEST(RedisQueue, TwoQueueObjectsOnOneStreamShareTheWork) {
  const std::string url = redis_env("REDIS_URL") + "/" + fresh_stream() + "?visibility_ms=60000";
  auto a = open_queue(url);
  auto b = open_queue(url);
  (void)a->send_batch(std::vector<std::string>{"x", "y"});
  auto got_a = a->receive(1, milliseconds(0));
  auto got_b = b->receive(10, milliseconds(0));
  ASSERT_EQ(got_a.size(), 1u);
  ASSERT_EQ(got_b.size(), 1u);
  EXPECT_NE(got_a[0].body, got_b[0].body);
  // A receipt taken by one consumer can be deleted through the other (as SQS allows).
  EXPECT_TRUE(b->delete_batch(std::vector<std::string>{got_a[0].receipt}).empty());
  EXPECT_EQ(a->counts().in_flight, 1u);
}

// `overhead status` on Redis: the oldest entry's age comes from the server's clock, and every
// object that has read from the group counts as a consumer.
TEST(RedisQueue, StatusKnowsTheOldestAgeAndTheConsumers) {
  const std::string url = redis_env("REDIS_URL") + "/" + fresh_stream() + "?visibility_ms=60000";
  auto a = open_queue(url);
  auto b = open_queue(url);
  EXPECT_FALSE(a->status().oldest_age.has_value());  // empty stream
  (void)a->send_batch(std::vector<std::string>{"x", "y"});
  std::this_thread::sleep_for(milliseconds(50));
  ASSERT_EQ(a->receive(1, milliseconds(0)).size(), 1u);
  ASSERT_EQ(b->receive(1, milliseconds(0)).size(), 1u);
  const auto s = a->status();
  ASSERT_TRUE(s.oldest_age.has_value());
  EXPECT_GE(s.oldest_age->count(), 40);
  EXPECT_LT(s.oldest_age->count(), 60000);
  ASSERT_TRUE(s.consumers.has_value());
  EXPECT_EQ(*s.consumers, 2u);
  EXPECT_EQ(s.counts.in_flight, 2u);
}

}  // namespace
}  // namespace overhead::backends
