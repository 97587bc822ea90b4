// PostgreSQL down for more than 10 s in the middle of a run: two `overhead worker` processes and
// one `overhead consume` work against the shared Redis fixture and a private PostgreSQL
// (postgres.sh in its own folder). Once the consumer has stored some records the server is
// stopped (postgres.sh stop: fast shutdown, data and port kept); while it is down the rest of the
// input is enqueued, so the workers keep working and the log stream has to hold their records;
// after 10.2 s it is started again on the same data and port. The consumer must retry through the
// outage and, when the store is back, store every (tokenizer, id) exactly once with its stamps.
// The workers' and the consumer's memory is sampled through the outage: the worker's bounded
// in-flight window and publisher queue, and the consumer's bounded rounds, keep it flat however
// much waits in the log stream.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "fault_support.hpp"
#include "ports/queue.hpp"

namespace overhead::fault_test {
namespace {

using namespace std::chrono_literals;

// How far a process's anonymous resident memory may rise over the outage (the tokenizer caches'
// file pages, faulted in as the vocabulary is first used, are not counted: they are not buffering). A worker holds at most its
// in-flight window (4 batches of 10) and its publisher queue (20 records); the consumer one round
// (200 records). Records are about 1 KiB, so buffering the outage's 3,000 records would show as
// several MiB, and their per-record allocations as more; 8 MiB leaves room for allocator noise.
constexpr std::size_t kMaxGrowthKib = 8 * 1024;
// A worker's tokenizer also keeps warming while the store is down: its chunk memos fill with the new
// texts' chunks whatever the store does (tok/chunk_memo.hpp, 64 K entries, 2 MiB per thread and
// model, zero pages until touched; the long-chunk memo of tok/bpe_model.hpp, at most 3.3 MiB; the
// boundary memo, at most 0.5 MiB). The worker holds no records past its window, so it gets that
// bound on top; the consumer, the process that could buffer the outage, does not.
constexpr std::size_t kTokenizerWarmUpKib = 3 * 6 * 1024;  // three models, one tokenizing thread

TEST(PostgresOutage, TheConsumerRetriesTheLogStreamHoldsTheRecordsAndNothingIsLost) {
  const std::string dir = ::testing::TempDir() + unique_name("pg-outage-");
  const auto t0 = std::chrono::steady_clock::now();
  auto at = [&](const char* what) {
    std::printf("%6.1f s  %s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), what);
    std::fflush(stdout);
  };
  PrivateService pg("postgres", dir);
  at("private PostgreSQL started");
  const std::string redis = service_env("OVERHEAD_REDIS_ENV", "REDIS_URL");
  const std::string in_url = redis + "/" + unique_name("outage-in-") + "?visibility_ms=5000";
  // A short visibility and a low max_receives: a consumer that kept taking messages while the store
  // was down would see them come back again and again, and move them to the dead-letter stream.
  const std::string log_url = redis + "/" + unique_name("outage-log-") + "?visibility_ms=2000&max_receives=3";
  const std::string store_url = pg.env("PG_URL") + "?timeout_ms=2000";
  const std::string experiment = "outage";
  auto expected = expected_keys(experiment, {"phi-4"}, 1500);
  const auto during = expected_keys(experiment, {"llama-3.3-70b-instruct"}, 3000);
  expected.insert(expected.end(), during.begin(), during.end());

  std::string out;
  ASSERT_EQ(run_overhead("enqueue --tokenizers phi-4 --limit 1500 --queue '" + in_url + "' --out '" + dir + "'", out), 0)
      << out;
  auto in = backends::open_queue(in_url);
  auto log = backends::open_queue(log_url);
  const std::vector<std::string> worker_args{"worker", "--queue", in_url, "--log-queue", log_url, "--tokenizers",
                                             "phi-4,llama-3.3-70b-instruct", "--experiment", experiment,
                                             "--idle-exit", "120", "--no-progress", "--out", dir};
  Child w1(worker_args, dir + "/worker1.log"), w2(worker_args, dir + "/worker2.log");
  Child c({"consume", "--log-queue", log_url, "--store", store_url, "--idle-exit", "120", "--no-progress", "--out", dir},
          dir + "/consume.log");

  ASSERT_TRUE(wait_for(120s, [&] { return store_rows(store_url, experiment).rows >= 200; })) << c.output();
  const std::size_t stored_before = store_rows(store_url, experiment).rows;
  at("store stopped");
  pg.stop();
  const auto down_at = std::chrono::steady_clock::now();
  const std::size_t rss0[] = {anon_rss_kib(w1.pid()), anon_rss_kib(w2.pid()), anon_rss_kib(c.pid())};
  ASSERT_EQ(run_overhead("enqueue --tokenizers llama-3.3-70b-instruct --limit 3000 --queue '" + in_url + "' --out '" +
                             dir + "'",
                         out),
            0)
      << out;
  std::size_t peak[] = {0, 0, 0}, log_peak = 0;
  while (std::chrono::steady_clock::now() - down_at < 10200ms) {
    peak[0] = std::max(peak[0], anon_rss_kib(w1.pid()));
    peak[1] = std::max(peak[1], anon_rss_kib(w2.pid()));
    peak[2] = std::max(peak[2], anon_rss_kib(c.pid()));
    const auto l = log->counts();
    log_peak = std::max(log_peak, l.visible + l.in_flight);
    std::this_thread::sleep_for(100ms);
  }
  const auto down_for = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - down_at);
  ASSERT_TRUE(c.running()) << "the consumer died while the store was down:\n" << c.output();
  ASSERT_TRUE(w1.running() && w2.running()) << w1.output() << w2.output();
  pg.start();
  at("store started again");
  std::printf("store down %lld ms with %zu rows stored; the log stream held up to %zu messages\n",
              static_cast<long long>(down_for.count()), stored_before, log_peak);
  const char* names[] = {"worker 1", "worker 2", "consumer"};
  for (int i = 0; i < 3; ++i) {
    std::printf("%s: anonymous RSS %zu KiB when the store went down, peak %zu KiB while it was down\n", names[i], rss0[i], peak[i]);
    const std::size_t allowed = kMaxGrowthKib + (i < 2 ? kTokenizerWarmUpKib : 0);
    EXPECT_LE(peak[i], rss0[i] + allowed) << names[i];
  }
  EXPECT_GE(log_peak, 2000u) << "the workers' records should wait in the log stream while the store is down";

  EXPECT_TRUE(wait_for(120s, [&] {
    const auto a = in->counts();
    const auto b = log->counts();
    return a.visible + a.in_flight + b.visible + b.in_flight == 0;
  }));
  at("input and log streams empty");
  for (Child* p : {&w1, &w2, &c}) p->signal(SIGTERM);
  for (Child* p : {&w1, &w2, &c}) EXPECT_EQ(p->wait(60s), 0) << p->output();
  std::printf("%s%s%s", w1.output().c_str(), w2.output().c_str(), c.output().c_str());

  const StoreRows rows = store_rows(store_url, experiment);
  std::size_t missing = 0;
  for (const auto& k : expected)
    if (!rows.keys.count(k)) ++missing;
  std::printf("store: %zu rows of %zu expected, %zu missing, %zu without publish_acked, %zu without input_deleted\n",
              rows.rows, expected.size(), missing, rows.without_publish_acked, rows.without_input_deleted);
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(rows.rows, expected.size());
  EXPECT_EQ(rows.without_publish_acked, 0u);
  EXPECT_EQ(rows.without_input_deleted, 0u);
  const auto dead = log->status().dead_letters;
  ASSERT_TRUE(dead.has_value());
  EXPECT_EQ(dead->visible, 0u) << "records went to the log's dead-letter stream because the store was down";
}

}  // namespace
}  // namespace overhead::fault_test
