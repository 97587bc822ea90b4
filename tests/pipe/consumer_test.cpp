// The consumer against a store that fails: records refused for now are retried alone (and then
// stored), records refused for good are dead-lettered and their messages deleted, and a store
// that fails as a whole leaves every message to come back.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "backends/open.hpp"
#include "pipe/consumer.hpp"
#include "pipe/errors.hpp"
#include "pipe/record_codec.hpp"

namespace overhead::pipe {
namespace {

// A store in memory whose upsert_batch refuses chosen ids: "throttled-*" once (retryable),
// "invalid-*" always (permanent); `down` fails every call as a whole.
class PickyStore final : public Store {
 public:
  void upsert(const Record& r) override { rows_[{r.experiment_tokenizer, r.id}] = r; }
  std::vector<UpsertFailure> upsert_batch(std::span<const Record> records) override {
    ++batches;
    if (down) throw StoreError("picky: connection refused", Failure::transient);
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

TEST(Consumer, AStoreDownLeavesTheMessagesToComeBack) {
  auto log = log_with({"a", "b"});
  PickyStore store;
  store.down = true;
  DeadLetterSink dead;
  ConsumerOptions o = quick();
  o.retry.attempts = 3;
  const ConsumerStats s = Consumer(log, store, dead, o).run();
  EXPECT_EQ(store.batches, 3);  // transient: retried up to the attempts
  EXPECT_EQ(s.store_failures, 1u);
  EXPECT_EQ(s.records, 0u);
  EXPECT_EQ(dead.total(), 0u);
  EXPECT_EQ(log->counts().in_flight, 2u);  // not deleted
}

}  // namespace
}  // namespace overhead::pipe
