// The consumer against a store that fails: records refused for now are retried alone (and then
// stored), records refused for good are dead-lettered and their messages deleted, and a store
// that fails as a whole holds the round until it is back (or leaves it to come back on a stop).
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include <unistd.h>

#include "backends/open.hpp"
#include "pipe/consumer.hpp"
#include "ports/errors.hpp"
#include "ports/record_codec.hpp"

namespace overhead::pipe {
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

std::shared_ptr<Queue> log_with(const std::vector<std::string>& ids) {
  auto q = backends::open_queue("mem:?visibility_ms=600000");
  std::vector<std::string> bodies;
  for (const auto& id : ids) {
    Record r;
    r.experiment = "e";
    r.tokenizer = "t";
    r.experiment_tokenizer = "e#t";
    r.id = id;
    std::string body;
    append_record_json(body, r);
    bodies.push_back(body);
  }
  send_all(*q, bodies);
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
  std::vector<std::string> bodies;
  for (const char* id : {"new-1", "new-2"}) {
    Record r;
    r.experiment = "e";
    r.tokenizer = "t";
    r.experiment_tokenizer = "e#t";
    r.id = id;
    append_record_json(bodies.emplace_back(), r);
  }
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

}  // namespace
}  // namespace overhead::pipe
