// The consumer against a store that fails: records refused for now are retried alone (and then
// stored), records refused for good are dead-lettered and their messages deleted, and a store
// that fails as a whole holds the round until it is back (or leaves it to come back on a stop).
// And the hold for stamps: a record waits (bounded) for its stamp patches so that they ride in its
// upsert, is stored at the end of its hold when they do not come, and a crash while it waits
// loses nothing (its message was not deleted).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

#include "backends/open.hpp"
#include "pipe/consumer.hpp"
#include "pipe/consumer_host.hpp"
#include "ports/errors.hpp"
#include "ports/record_codec.hpp"
#include "support/forwarding_queue.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using ports::append_record_json;
using ports::append_stamps_json;
using ports::Failure;
using ports::Message;
using ports::Queue;
using ports::QueueError;
using ports::Record;
using ports::send_all;
using ports::StampPatch;
using ports::Store;
using ports::StoreError;
using ports::UpsertFailure;
namespace {

// A store in memory whose upsert_batch refuses chosen ids: "throttled-*" once (retryable),
// "invalid-*" always (permanent); `down` fails every call as a whole.
class PickyStore final : public Store {
 public:
  void upsert(const Record& r) override { rows_[{r.experiment_tokenizer, r.id}] = r; }
  std::vector<UpsertFailure> upsert_batch(std::span<const Record> records) override {
    ++batches;
    if (down || down_calls > 0) {
      --down_calls;
      throw StoreError("picky: connection refused", Failure::transient);
    }
    std::vector<UpsertFailure> out;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const std::string& id = records[i].id;
      if (id.starts_with("invalid-")) out.push_back({i, {false, "item too large"}});
      else if (id.starts_with("throttled-") && throttled_.insert(id).second) out.push_back({i, {true, "throttled"}});
      else upsert(records[i]);
    }
    return out;
  }
  std::size_t update_stamps(std::span<const StampPatch> patches) override { return patches.size(); }
  void scan(const std::string&, const std::function<void(const Record&)>& fn) override {
    for (auto& [k, r] : rows_) fn(r);
  }
  const std::string& url() const override { return url_; }

  bool down = false;
  int down_calls = 0;  // fail this many calls as a whole, then work
  int batches = 0;
  std::set<std::string> ids() const {
    std::set<std::string> out;
    for (auto& [k, r] : rows_) out.insert(k.second);
    return out;
  }

 private:
  std::string url_ = "picky:";
  std::map<std::pair<std::string, std::string>, Record> rows_;
  std::set<std::string> throttled_;
};

// The log-queue bodies of records `ids` of experiment "e", tokenizer "t".
std::vector<std::string> record_bodies(const std::vector<std::string>& ids) {
  std::vector<std::string> bodies;
  for (const auto& id : ids) {
    Record r;
    r.experiment = "e";
    r.tokenizer = "t";
    r.experiment_tokenizer = "e#t";
    r.id = id;
    append_record_json(bodies.emplace_back(), r);
  }
  return bodies;
}

std::shared_ptr<Queue> log_with(const std::vector<std::string>& ids) {
  auto q = backends::open_queue("mem:?visibility_ms=600000");
  send_all(*q, record_bodies(ids));
  return q;
}

ConsumerOptions quick() {
  ConsumerOptions o;
  o.wait = std::chrono::milliseconds(0);
  o.retry.sleep = [](std::chrono::microseconds) {};
  return o;
}

TEST(Consumer, RetriesOnlyTheThrottledRecordsAndDeadLettersTheRefused) {
  auto log = log_with({"a", "throttled-1", "invalid-1", "b", "throttled-2"});
  PickyStore store;
  DeadLetterSink dead;
  const ConsumerStats s = Consumer(log, store, dead, quick()).run();
  EXPECT_EQ(store.ids(), (std::set<std::string>{"a", "b", "throttled-1", "throttled-2"}));
  EXPECT_EQ(s.records, 4u);
  EXPECT_EQ(s.rejected_records, 1u);
  EXPECT_GE(s.store_retries, 1u);
  EXPECT_EQ(s.store_failures, 0u);
  ASSERT_EQ(dead.total(), 1u);
  EXPECT_EQ(dead.letters()[0].kind, "store_failed");
  EXPECT_NE(dead.letters()[0].reason.find("item too large"), std::string::npos);
  // Every message is settled: stored or dead-lettered, none left in flight.
  EXPECT_EQ(log->counts().visible + log->counts().in_flight, 0u);
}

// Patches are written with their records when both are in one round, and through update_stamps
// otherwise, and a patch may name both kinds (the worker's patch carries the previous batch's
// input_deleted with this batch's publish_acked): every stamp must land, every message settle.
TEST(Consumer, StampsLandWhetherTheirRecordIsInTheRoundOrStoredBefore) {
  const auto dir = std::filesystem::temp_directory_path() / ("overhead-consumer-fold-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = backends::open_store("sqlite:" + (dir / "r.db").string());
  auto log = log_with({"old-1", "old-2"});
  DeadLetterSink dead;
  EXPECT_EQ(Consumer(log, *store, dead, quick()).run().records, 2u);  // a round before
  std::vector<std::string> bodies = record_bodies({"new-1", "new-2"});
  // Unfolded entries first and last, folded ones between, so that kept entries move down.
  const std::vector<StampPatch> one = {{"e#t", "old-1", 0, 11}, {"e#t", "new-1", 21, 0}, {"e#t", "old-2", 0, 12}};
  const std::vector<StampPatch> two = {{"e#t", "new-1", 0, 31}, {"e#t", "new-2", 22, 32}};
  append_stamps_json(bodies.emplace_back(), one);
  append_stamps_json(bodies.emplace_back(), two);
  send_all(*log, bodies);
  const ConsumerStats s = Consumer(log, *store, dead, quick()).run();
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(s.deferred_patches, 0u);
  EXPECT_EQ(log->counts().visible + log->counts().in_flight, 0u);
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> got;
  store->scan("e", [&](const Record& r) { got[r.id] = {r.publish_acked, r.input_deleted}; });
  EXPECT_EQ(got["old-1"], (std::pair<std::int64_t, std::int64_t>{0, 11}));
  EXPECT_EQ(got["old-2"], (std::pair<std::int64_t, std::int64_t>{0, 12}));
  EXPECT_EQ(got["new-1"], (std::pair<std::int64_t, std::int64_t>{21, 31}));
  EXPECT_EQ(got["new-2"], (std::pair<std::int64_t, std::int64_t>{22, 32}));
  std::filesystem::remove_all(dir);
}

// A store that is down past the retries: the consumer holds its round (receives nothing more, so
// no message is delivered twice and none moves nearer the dead-letter queue) and stores it when
// the store is back. Before the fix it received the rest of the log and let the round come back.
TEST(Consumer, AStoreDownHoldsTheRoundAndStoresItWhenTheStoreIsBack) {
  auto log = log_with({"a", "b"});
  PickyStore store;
  store.down_calls = 7;  // two rounds of 3 attempts fail whole, the third round's first try too
  DeadLetterSink dead;
  ConsumerOptions o = quick();
  o.retry.attempts = 3;
  const ConsumerStats s = Consumer(log, store, dead, o).run();
  EXPECT_EQ(store.ids(), (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(s.messages, 2u);  // each received once: held, never redelivered
  EXPECT_EQ(s.store_failures, 2u);
  EXPECT_EQ(s.store_outage_waits, 2u);
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(dead.total(), 0u);
  EXPECT_EQ(log->counts().visible + log->counts().in_flight, 0u);
}

TEST(Consumer, AStopWhileTheStoreIsDownLeavesTheMessagesToComeBack) {
  auto log = log_with({"a", "b"});
  PickyStore store;
  store.down = true;
  DeadLetterSink dead;
  std::atomic<bool> stop{false};
  ConsumerOptions o = quick();
  o.retry.attempts = 3;
  o.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  const ConsumerStats s = Consumer(log, store, dead, o).run();
  stopper.join();
  EXPECT_GE(s.store_failures, 1u);
  EXPECT_EQ(s.records, 0u);
  EXPECT_EQ(s.messages, 2u);
  EXPECT_EQ(dead.total(), 0u);
  EXPECT_EQ(log->counts().in_flight, 2u);  // not deleted
}

// A real SQLite store that counts the UPDATEs of stamp patches (the calls the hold saves).
class StampCountingStore final : public Store {
 public:
  explicit StampCountingStore(const std::filesystem::path& file) : inner_(backends::open_store("sqlite:" + file.string())) {}
  void upsert(const Record& r) override { inner_->upsert(r); }
  std::vector<UpsertFailure> upsert_batch(std::span<const Record> records) override { return inner_->upsert_batch(records); }
  std::size_t update_stamps(std::span<const StampPatch> patches) override {
    ++stamp_updates;
    return inner_->update_stamps(patches);
  }
  void scan(const std::string& experiment, const std::function<void(const Record&)>& fn) override { inner_->scan(experiment, fn); }
  const std::string& url() const override { return inner_->url(); }

  std::map<std::string, std::pair<std::int64_t, std::int64_t>> stamps() {
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> out;
    inner_->scan("e", [&](const Record& r) { out[r.id] = {r.publish_acked, r.input_deleted}; });
    return out;
  }
  std::atomic<int> stamp_updates{0};

 private:
  std::unique_ptr<Store> inner_;
};

// A log queue whose receive fails once `crash` is set: the consumer's run ends there, as a
// process's would at a kill, with what it holds neither stored nor deleted.
class CrashingQueue final : public test_support::ForwardingQueue {
 public:
  using ForwardingQueue::ForwardingQueue;
  std::vector<Message> receive(std::size_t max, std::chrono::milliseconds wait) override {
    if (crash) throw std::logic_error("killed");
    return inner().receive(max, wait);
  }
  std::atomic<bool> crash{false};
};

// Waits (up to 20 s, for slow sanitizer runs) until `done` holds.
template <class Fn>
bool eventually(Fn&& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::string stamps_body(const std::vector<StampPatch>& patches) {
  std::string body;
  append_stamps_json(body, patches);
  return body;
}

// A consumer running in its own thread until drained; run() failing ends it too.
struct ConsumerThread {
  ConsumerThread(std::shared_ptr<Queue> log, Store& store, ConsumerOptions o) {
    o.drain = &drain;
    o.wait = std::chrono::milliseconds(5);
    thread = std::thread([this, log, &store, o] {
      try {
        stats = Consumer(log, store, dead, o).run();
      } catch (const std::exception&) {
        died = true;
      }
      finished = true;
    });
  }
  ~ConsumerThread() { stop(); }
  void stop() {
    drain = true;
    if (thread.joinable()) thread.join();
  }
  std::atomic<bool> drain{false}, finished{false}, died{false};
  DeadLetterSink dead;
  ConsumerStats stats;
  std::thread thread;
};

// The worker sends a batch's publish_acked patch after its records, and the input_deleted one
// with the next batch: both come in rounds after the record's. Held, the record is stored once,
// with both stamps, and no UPDATE runs. Before the hold each patch was an UPDATE of a stored row.
TEST(ConsumerHold, PatchesOfLaterRoundsRideInTheHeldRecordsUpsert) {
  const auto dir = testing::temp_dir("consumer-hold");
  StampCountingStore store(dir / "r.db");
  auto log = log_with({"a", "b"});
  ConsumerOptions o = quick();
  o.hold_for_stamps = std::chrono::minutes(10);  // capped at a quarter of the 600 s visibility
  o.max_records_per_write = 2;  // a transaction's worth: stored once both are complete
  ConsumerThread consumer(log, store, o);
  ASSERT_TRUE(eventually([&] { return log->counts().in_flight == 2; }));  // both records received
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past the round's linger: the patches come in later rounds
  send_all(*log, std::vector<std::string>{stamps_body({{"e#t", "a", 11, 0}, {"e#t", "b", 12, 0}})});
  send_all(*log, std::vector<std::string>{stamps_body({{"e#t", "a", 0, 21}})});
  send_all(*log, std::vector<std::string>{stamps_body({{"e#t", "b", 0, 22}})});
  ASSERT_TRUE(eventually([&] { return store.stamps().size() == 2; }));
  EXPECT_FALSE(consumer.finished.load());  // stored when complete, not by the drain
  consumer.stop();
  EXPECT_EQ(store.stamp_updates.load(), 0);
  EXPECT_EQ(store.stamps(), (std::map<std::string, std::pair<std::int64_t, std::int64_t>>{{"a", {11, 21}}, {"b", {12, 22}}}));
  EXPECT_EQ(consumer.stats.records, 2u);
  EXPECT_EQ(consumer.stats.stamp_patches, 3u);
  EXPECT_EQ(log->counts().visible + log->counts().in_flight, 0u);  // every patch message settled too
  std::filesystem::remove_all(dir);
}

// A record whose input_deleted never comes (the worker's delete failed, or it has no input queue)
// is stored at the end of its hold, with the stamp that did come, while the consumer runs on.
TEST(ConsumerHold, AHeldRecordIsStoredWhenItsHoldEndsWithoutItsLastPatch) {
  const auto dir = testing::temp_dir("consumer-hold-end");
  StampCountingStore store(dir / "r.db");
  auto log = log_with({"a"});
  ConsumerOptions o = quick();
  o.hold_for_stamps = std::chrono::milliseconds(300);
  ConsumerThread consumer(log, store, o);
  ASSERT_TRUE(eventually([&] { return log->counts().in_flight == 1; }));
  const auto received = std::chrono::steady_clock::now();
  send_all(*log, std::vector<std::string>{stamps_body({{"e#t", "a", 11, 0}})});
  ASSERT_TRUE(eventually([&] { return store.stamps().size() == 1; }));
  EXPECT_GE(std::chrono::steady_clock::now() - received, std::chrono::milliseconds(250));  // held, not stored at once
  EXPECT_FALSE(consumer.finished.load());  // stored by its hold's end, not by the drain
  ASSERT_TRUE(eventually([&] { return log->counts().visible + log->counts().in_flight == 0; }));
  consumer.stop();
  EXPECT_EQ(store.stamp_updates.load(), 0);
  EXPECT_EQ(store.stamps()["a"], (std::pair<std::int64_t, std::int64_t>{11, 0}));
  std::filesystem::remove_all(dir);
}

// A consumer that dies while it holds records (and a patch folded into them) has deleted none of
// their messages: after the visibility timeout a new consumer stores every record, stamps and
// all, and the log is empty.
TEST(ConsumerHold, ACrashWhileHoldingLosesNothing) {
  const auto dir = testing::temp_dir("consumer-hold-crash");
  StampCountingStore store(dir / "r.db");
  testing::ManualClock clock;
  auto mem = backends::open_queue("mem:?visibility_ms=60000", clock.fn());
  auto log = std::make_shared<CrashingQueue>(mem);
  const std::vector<std::string> bodies = record_bodies({"a", "b"});
  send_all(*log, bodies);
  ConsumerOptions o = quick();
  o.hold_for_stamps = std::chrono::minutes(10);
  {
    ConsumerThread first(log, store, o);
    ASSERT_TRUE(eventually([&] { return mem->counts().in_flight == 2; }));
    send_all(*log, std::vector<std::string>{stamps_body({{"e#t", "a", 11, 0}, {"e#t", "b", 12, 0}})});
    ASSERT_TRUE(eventually([&] { return mem->counts().in_flight == 3; }));  // the patch is folded in, held too
    log->crash = true;
    ASSERT_TRUE(eventually([&] { return first.finished.load(); }));
    EXPECT_TRUE(first.died.load());
  }
  EXPECT_TRUE(store.stamps().empty());        // held, never stored
  EXPECT_EQ(mem->counts().in_flight, 3u);     // and never deleted
  clock.advance(60001);                       // the visibility timeout passes: all three come back
  log->crash = false;
  DeadLetterSink dead;
  ConsumerOptions again = quick();
  const ConsumerStats s = Consumer(log, store, dead, again).run();
  EXPECT_EQ(s.records, 2u);
  EXPECT_EQ(store.stamps(), (std::map<std::string, std::pair<std::int64_t, std::int64_t>>{{"a", {11, 0}}, {"b", {12, 0}}}));
  EXPECT_EQ(mem->counts().visible + mem->counts().in_flight, 0u);
  std::filesystem::remove_all(dir);
}

// The consumer on its own thread (consumer_host.hpp): it keeps reading until drained, then
// stores what came and ends; a stop ends it while the store is down; a failure reaches join().
TEST(ConsumerHost, RunsUntilDrainedAndJoinsWithItsStats) {
  auto log = log_with({"a", "b"});
  PickyStore store;
  DeadLetterSink dead;
  ConsumerHost host(log, store, dead, quick());
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  send_all(*log, record_bodies({"c"}));  // not drained yet: still read
  host.drain();
  const ConsumerStats s = host.join();
  EXPECT_EQ(s.records, 3u);
  EXPECT_EQ(store.ids(), (std::set<std::string>{"a", "b", "c"}));
}

TEST(ConsumerHost, AStopEndsItWhileTheStoreIsDown) {
  auto log = log_with({"a"});
  PickyStore store;
  store.down = true;
  DeadLetterSink dead;
  ConsumerHost host(log, store, dead, quick());
  EXPECT_FALSE(host.wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
  host.drain();  // a store down holds the round: draining alone does not end it
  EXPECT_FALSE(host.wait_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(100)));
  host.stop();
  EXPECT_TRUE(host.wait_until(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_EQ(host.join().records, 0u);
}

TEST(ConsumerHost, AFailureReachesJoinOrTheCallback) {
  // A log queue whose receive fails for good (a broker that refuses the consumer).
  class FailingQueue final : public test_support::ForwardingQueue {
   public:
    using ForwardingQueue::ForwardingQueue;
    std::vector<Message> receive(std::size_t, std::chrono::milliseconds) override {
      throw QueueError("failing: refused", Failure::permanent);
    }
  };
  PickyStore store;
  DeadLetterSink dead;
  {
    ConsumerHost host(std::make_shared<FailingQueue>(log_with({"a"})), store, dead, quick());
    host.drain();
    EXPECT_THROW((void)host.join(), QueueError);
  }
  std::string told;
  ConsumerHost host(std::make_shared<FailingQueue>(log_with({"a"})), store, dead, quick(),
                    [&](const std::exception& e) { told = e.what(); });
  host.drain();
  (void)host.join();
  EXPECT_NE(told.find("refused"), std::string::npos) << told;
}

}  // namespace
}  // namespace overhead::pipe
