// At-least-once with idempotent writes, on the durable queue: the worker is stopped abruptly at
// one of its stages (an exception from the test hook; nothing after it runs: no delete, queued
// records dropped), every object is dropped as a dead process's would be, then a new worker on
// the same files finishes the job after the visibility timeout. Every id must end up in the
// store exactly once.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "fake_processor.hpp"
#include "backends/open.hpp"
#include "pipe/consumer.hpp"
#include "pipe/producer.hpp"
#include "pipe/worker.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using ports::Record;
using backends::open_queue;
using backends::open_store;
namespace {

using std::chrono::milliseconds;

struct Crash {
  WorkerStage stage;
  int at_call;  // crash on the n-th time the stage is reached (1-based)
  bool prefetch;
  unsigned publishers;
};

class Restart : public ::testing::TestWithParam<Crash> {};

TEST_P(Restart, EveryIdExactlyOnceAfterAnAbruptStop) {
  const Crash crash = GetParam();
  const auto dir = testing::temp_dir("restart");
  testing::ManualClock clock;
  const std::string in_url = "sqlite-queue:" + (dir / "in.db").string() + "?name=in&visibility_ms=60000&max_receives=5";
  const std::string log_url = "sqlite-queue:" + (dir / "log.db").string() + "?name=log&visibility_ms=60000";
  const std::string store_url = "sqlite:" + (dir / "records.db").string();
  const std::vector<std::string> tokenizers = {"llama", "phi"};
  const int n_records = 27;
  {
    std::vector<std::shared_ptr<const SourceRecord>> recs;
    for (int i = 0; i < n_records; ++i) recs.push_back(parse_source_line(testing::source_line("id" + std::to_string(i)), i + 1));
    auto in = open_queue(in_url, clock.fn());
    produce(recs, tokenizers, *in);
  }
  auto proc = testing::fake_processor();
  auto worker_options = [&] {
    WorkerOptions o;
    o.experiment = "restart";
    o.case_number = 5;
    o.prefetch = crash.prefetch;
    o.publishers = crash.publishers;
    return o;
  };

  // First life: crash.
  {
    auto in = open_queue(in_url, clock.fn());
    auto log = open_queue(log_url, clock.fn());
    QueueSource source(in, milliseconds(0), milliseconds(0));
    QueueSink sink(log);
    DeadLetterSink dead;
    auto o = worker_options();
    o.name = "worker-a";
    std::atomic<int> calls{0};
    o.fault = [&](WorkerStage stage) {
      if (stage == crash.stage && calls.fetch_add(1) + 1 == crash.at_call) throw WorkerCrash{};
    };
    Worker worker(source, proc, sink, dead, o);
    EXPECT_THROW(worker.run(), WorkerCrash);
    EXPECT_GT(in->counts().in_flight, 0u) << "the crash must leave received, undeleted inputs behind";
  }
  // The dead worker's messages become visible again after the timeout.
  clock.advance(61000);

  // Second life: same files, new objects.
  std::uint64_t records_consumed = 0;
  {
    auto in = open_queue(in_url, clock.fn());
    auto log = open_queue(log_url, clock.fn());
    QueueSource source(in, milliseconds(0), milliseconds(0));
    QueueSink sink(log);
    DeadLetterSink dead;
    auto o = worker_options();
    o.name = "worker-b";
    Worker worker(source, proc, sink, dead, o);
    const WorkerStats stats = worker.run();
    EXPECT_EQ(stats.bad_input + stats.publish_failed, 0u);
    EXPECT_EQ(in->counts().visible + in->counts().in_flight, 0u);
    EXPECT_EQ(dead.total(), 0u);

    auto store = open_store(store_url);
    ConsumerOptions co;
    co.wait = milliseconds(0);
    Consumer consumer(log, *store, dead, co);
    records_consumed = consumer.run().records;
  }

  auto store = open_store(store_url);
  std::map<std::pair<std::string, std::string>, int> seen;
  store->scan("restart", [&](const Record& r) { ++seen[{r.tokenizer, r.id}]; });
  EXPECT_EQ(seen.size(), tokenizers.size() * n_records);
  for (const auto& t : tokenizers)
    for (int i = 0; i < n_records; ++i) EXPECT_EQ((seen[{t, "id" + std::to_string(i)}]), 1) << t << " id" << i;
  EXPECT_GE(records_consumed, tokenizers.size() * n_records);
  if (crash.stage == WorkerStage::before_delete) {
    EXPECT_GT(records_consumed, tokenizers.size() * n_records) << "published-but-undeleted inputs are replayed";
  }
  std::filesystem::remove_all(dir);
}

std::string crash_name(const ::testing::TestParamInfo<Crash>& p) {
  static const char* const kStages[] = {"AfterReceive", "AfterRender", "AfterPublish", "BeforeDelete", "AfterDelete"};
  return std::string(kStages[static_cast<int>(p.param.stage)]) + (p.param.prefetch ? "PrefetchAsync" : "Sync");
}

INSTANTIATE_TEST_SUITE_P(
    Stages, Restart,
    ::testing::Values(Crash{WorkerStage::after_receive, 2, false, 0}, Crash{WorkerStage::after_render, 15, false, 0},
                      Crash{WorkerStage::after_publish, 15, false, 0}, Crash{WorkerStage::before_delete, 2, false, 0},
                      Crash{WorkerStage::after_receive, 3, true, 4}, Crash{WorkerStage::after_render, 25, true, 4},
                      Crash{WorkerStage::after_publish, 25, true, 4}, Crash{WorkerStage::before_delete, 2, true, 4}),
    crash_name);


// The stamp-patch gap: a worker stopped right after deleting an input batch (before anything
// else happens) must not leave stored records without publish_acked: that patch is confirmed on
// the log queue before the delete. Only the input_deleted stamps of that one batch may be
// missing (they exist only after the delete and were still in the worker's hands).
class StampGap : public ::testing::TestWithParam<bool> {};

TEST_P(StampGap, ACrashAfterTheDeleteCostsOnlyThatBatchsInputDeletedStamps) {
  const bool prefetch = GetParam();
  const auto dir = testing::temp_dir("stampgap");
  testing::ManualClock clock;
  const std::string in_url = "sqlite-queue:" + (dir / "in.db").string() + "?name=in&visibility_ms=60000&max_receives=5";
  const std::string log_url = "sqlite-queue:" + (dir / "log.db").string() + "?name=log&visibility_ms=60000";
  const std::string store_url = "sqlite:" + (dir / "records.db").string();
  const int n_records = 45;
  {
    std::vector<std::shared_ptr<const SourceRecord>> recs;
    for (int i = 0; i < n_records; ++i) recs.push_back(parse_source_line(testing::source_line("id" + std::to_string(i)), i + 1));
    auto in = open_queue(in_url, clock.fn());
    produce(recs, {"llama"}, *in);
  }
  auto proc = testing::fake_processor();
  for (const char* name : {"worker-a", "worker-b"}) {
    auto in = open_queue(in_url, clock.fn());
    auto log = open_queue(log_url, clock.fn());
    QueueSource source(in, milliseconds(0), milliseconds(0));
    QueueSink sink(log);
    DeadLetterSink dead;
    WorkerOptions o;
    o.experiment = "gap";
    o.case_number = 5;
    o.prefetch = prefetch;
    o.publishers = prefetch ? 4 : 0;
    o.name = name;
    std::atomic<int> deletes{0};
    if (std::string(name) == "worker-a") {
      o.fault = [&](WorkerStage stage) {
        if (stage == WorkerStage::after_delete && deletes.fetch_add(1) + 1 == 2) throw WorkerCrash{};
      };
      Worker worker(source, proc, sink, dead, o);
      EXPECT_THROW(worker.run(), WorkerCrash);
      clock.advance(61000);  // what the dead worker held but had not deleted comes back
    } else {
      Worker worker(source, proc, sink, dead, o);
      (void)worker.run();
      EXPECT_EQ(in->counts().visible + in->counts().in_flight, 0u);
    }
  }
  {
    auto log = open_queue(log_url, clock.fn());
    auto store = open_store(store_url);
    DeadLetterSink dead;
    ConsumerOptions co;
    co.wait = milliseconds(0);
    Consumer consumer(log, *store, dead, co);
    const ConsumerStats cs = consumer.run();
    EXPECT_EQ(cs.deferred_patches, 0u);
    EXPECT_EQ(log->counts().visible + log->counts().in_flight, 0u);
  }
  auto store = open_store(store_url);
  std::size_t rows = 0, without_acked = 0;
  std::map<std::string, std::size_t> without_deleted;  // by worker
  store->scan("gap", [&](const Record& r) {
    ++rows;
    if (r.publish_acked == 0) ++without_acked;
    if (r.input_deleted == 0) ++without_deleted[r.worker];
  });
  EXPECT_EQ(rows, std::size_t(n_records));
  EXPECT_EQ(without_acked, 0u) << "publish_acked is sent before the delete, so no crash can lose it";
  // Exactly the second batch of worker-a (10 items) lost its input_deleted stamps: it was
  // deleted, and the crash fell before the next patch could carry them.
  EXPECT_EQ(without_deleted["worker-a"], 10u);
  EXPECT_EQ(without_deleted.count("worker-b"), 0u) << without_deleted["worker-b"] << " rows of worker-b";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Modes, StampGap, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "PrefetchAsync" : "Sync"; });

}  // namespace
}  // namespace overhead::pipe
