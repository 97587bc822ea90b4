// The queue contract (contract/queue_contract.hpp) over the embedded backends, on the test's
// clock and on the real one; and what is particular to opening them.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "backends/open.hpp"
#include "ports/errors.hpp"
#include "ports/queue.hpp"
#include "queue_contract.hpp"
#include "queue_family_contract.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using ports::ClockMs;
using backends::open_queue;
using contract::QueueBackend;
using contract::QueueFamilySemantics;
using contract::QueueSemantics;
namespace {

using std::chrono::milliseconds;

QueueBackend mem_backend(double real_clock_scale) {
  return contract::url_queue_backend(real_clock_scale > 0 ? "mem_real_clock" : "mem",
                                     [](int, const std::string& params) { return "mem:?" + params; }, real_clock_scale);
}

QueueBackend sqlite_backend(double real_clock_scale) {
  return QueueBackend{real_clock_scale > 0 ? "sqlite_real_clock" : "sqlite",
                      [](const std::filesystem::path& dir, int n, const std::string& params, ClockMs clock) {
                        return open_queue("sqlite-queue:" + (dir / "q.db").string() + "?name=q" + std::to_string(n) +
                                              "&" + params,
                                          std::move(clock));
                      },
                      real_clock_scale,
                      {}};
}

INSTANTIATE_TEST_SUITE_P(Backends, QueueSemantics, ::testing::Values(mem_backend(0), sqlite_backend(0)),
                         contract::QueueBackendName{});
// The same suite against wall time, as a server's clock would run it.
INSTANTIATE_TEST_SUITE_P(RealClock, QueueSemantics, ::testing::Values(mem_backend(1.0)), contract::QueueBackendName{});

// The queue families of the embedded schemes (Redis: tests/backends/redis_queue_test.cpp).
INSTANTIATE_TEST_SUITE_P(
    Backends, QueueFamilySemantics,
    ::testing::Values(
        contract::QueueFamilyBackend{"mem", false, [](const std::filesystem::path&, const std::string& q) { return "mem:" + q; }},
        contract::QueueFamilyBackend{"sqlite", true,
                                     [](const std::filesystem::path& dir, const std::string& q) {
                                       return "sqlite-queue:" + (dir / "q.db").string() + "?visibility_ms=500&name=" + q;
                                     }}),
    contract::QueueFamilyBackendName{});

TEST(QueueOpen, NamedMemQueuesAreSharedInAProcess) {
  auto a = open_queue("mem:queue-test-shared");
  auto b = open_queue("mem:queue-test-shared");
  (void)a->send_batch(std::vector<std::string>{"x"});
  EXPECT_EQ(b->receive(1, milliseconds(0)).size(), 1u);
  auto fresh1 = open_queue("mem:");
  auto fresh2 = open_queue("mem:");
  EXPECT_NE(fresh1.get(), fresh2.get());
}

TEST(QueueOpen, UnknownSchemeAndBadParameterAreClearErrors) {
  EXPECT_THROW(open_queue("nosuch:x"), std::invalid_argument);
  EXPECT_THROW(open_queue("mem:x?visibility_ms=abc"), std::invalid_argument);
  EXPECT_THROW(open_queue("no-colon"), std::invalid_argument);
}

TEST(SqliteQueue, MessagesSurviveReopening) {
  const auto dir = testing::temp_dir("durable");
  const std::string url = "sqlite-queue:" + (dir / "q.db").string() + "?name=in&visibility_ms=50";
  {
    auto q = open_queue(url);
    (void)q->send_batch(std::vector<std::string>{"a", "b"});
    ASSERT_EQ(q->receive(1, milliseconds(0)).size(), 1u);  // in flight when the process "dies"
  }
  auto q = open_queue(url);
  std::set<std::string> got;
  for (int i = 0; i < 200 && got.size() < 2; ++i) {
    for (auto& m : q->receive(10, milliseconds(20))) {
      got.insert(m.body);
      (void)q->delete_batch(std::vector<std::string>{m.receipt});
    }
  }
  EXPECT_EQ(got, (std::set<std::string>{"a", "b"}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
