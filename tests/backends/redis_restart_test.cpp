// Redis restarted in the middle of a run: two `overhead worker` and two `overhead consume`
// processes work against a private redis-server (AOF on) and the shared PostgreSQL fixture; when
// a quarter of the input is done the server is stopped with SIGTERM (redis.sh stop), left down
// for 2 s and started again on the same port and AOF (redis.sh start). The clients must ride it
// out (the queue retries lost connections with backoff for retry_ms) and the run must end with
// every (tokenizer, id) in the store exactly once, with its stamps, and nothing left in the input
// stream, the log stream, their pending lists or the dead-letter stream.
//
// It fails when anything is lost (e.g. a server that comes back without its AOF), when a process
// dies of the outage, or when the restart did not happen while work was still in flight.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "fault_support.hpp"
#include "ports/queue.hpp"

namespace overhead::fault_test {
namespace {

using namespace std::chrono_literals;

TEST(RedisRestart, WorkersAndConsumersRideOutARestartAndNothingIsLostOrDuplicated) {
  const std::string dir = ::testing::TempDir() + unique_name("redis-restart-");
  PrivateService redis("redis", dir);
  const std::string base = redis.env("REDIS_URL");
  // Short visibility timeouts so that anything left in flight by the outage comes back quickly.
  const std::string in_url = base + "/in?visibility_ms=5000&max_receives=5";
  const std::string log_url = base + "/log?visibility_ms=2000";
  const std::string store_url = service_env("OVERHEAD_POSTGRES_ENV", "PG_URL") + "?table=" + unique_name("restart_");
  const std::string experiment = "restart";
  const std::vector<std::string> tokenizers{"phi-4", "llama-3.3-70b-instruct"};
  const std::size_t limit = 3000;
  const auto expected = expected_keys(experiment, tokenizers, limit);
  const std::size_t total = expected.size();

  std::string out;
  ASSERT_EQ(run_overhead("enqueue --tokenizers phi-4,llama-3.3-70b-instruct --limit " + std::to_string(limit) +
                             " --queue '" + in_url + "' --out '" + dir + "'",
                         out),
            0)
      << out;

  auto in = backends::open_queue(in_url);
  auto log = backends::open_queue(log_url);
  const std::vector<std::string> worker_args{"worker", "--queue", in_url, "--log-queue", log_url, "--tokenizers",
                                             "phi-4,llama-3.3-70b-instruct", "--experiment", experiment,
                                             "--idle-exit", "3", "--no-progress", "--out", dir};
  const std::vector<std::string> consume_args{"consume", "--log-queue", log_url, "--store", store_url,
                                              "--idle-exit", "120", "--no-progress", "--out", dir};
  Child c1(consume_args, dir + "/consume1.log"), c2(consume_args, dir + "/consume2.log");
  Child w1(worker_args, dir + "/worker1.log"), w2(worker_args, dir + "/worker2.log");

  // Restart once a quarter of the items has left the input stream.
  auto left_in_input = [&] {
    const auto c = in->counts();
    return c.visible + c.in_flight;
  };
  ASSERT_TRUE(wait_for(120s, [&] { return left_in_input() <= total * 3 / 4; })) << w1.output() << w2.output();
  const std::size_t left_at_stop = left_in_input();
  redis.stop();
  std::this_thread::sleep_for(2s);
  redis.start();
  std::printf("restarted redis with %zu of %zu items still in the input stream\n", left_at_stop, total);
  ASSERT_GT(left_at_stop, total / 10) << "the run was nearly over before the restart; the test proves nothing";

  EXPECT_EQ(w1.wait(180s), 0) << w1.output();
  EXPECT_EQ(w2.wait(180s), 0) << w2.output();
  // The consumers stop on SIGTERM once the log stream is empty (records and stamp patches).
  EXPECT_TRUE(wait_for(120s, [&] {
    const auto c = log->counts();
    return c.visible == 0 && c.in_flight == 0;
  }));
  c1.signal(SIGTERM);
  c2.signal(SIGTERM);
  EXPECT_EQ(c1.wait(60s), 0) << c1.output();
  EXPECT_EQ(c2.wait(60s), 0) << c2.output();
  std::printf("%s%s%s%s", w1.output().c_str(), w2.output().c_str(), c1.output().c_str(), c2.output().c_str());

  const StoreRows rows = store_rows(store_url, experiment);
  std::size_t missing = 0;
  for (const auto& k : expected) {
    const auto it = rows.keys.find(k);
    if (it == rows.keys.end()) ++missing;
    else EXPECT_EQ(it->second, 1) << k.first << " " << k.second;
  }
  std::printf("store: %zu rows of %zu expected, %zu missing, %zu without publish_acked, %zu without input_deleted\n",
              rows.rows, total, missing, rows.without_publish_acked, rows.without_input_deleted);
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(rows.rows, total);
  EXPECT_EQ(rows.without_publish_acked, 0u);
  EXPECT_EQ(rows.without_input_deleted, 0u);

  const ports::QueueStatus s = in->status();
  EXPECT_EQ(s.counts.visible, 0u);
  EXPECT_EQ(s.counts.in_flight, 0u);
  ASSERT_TRUE(s.dead_letters.has_value());
  EXPECT_EQ(s.dead_letters->visible, 0u);
  const auto l = log->counts();
  EXPECT_EQ(l.visible + l.in_flight, 0u);
}

}  // namespace
}  // namespace overhead::fault_test
