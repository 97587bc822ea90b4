// The consumer's batch step (pipe/store_step.hpp), as `overhead lambda` runs it: a body that is no
// log message fails when added, records are stored before the stamp patches of the same batch,
// a refused record and a store that stays down name their messages (store_failed, stamps_failed),
// and a patch whose record is not stored yet is deferred (stamps_deferred).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "pipe/store_step.hpp"
#include "ports/errors.hpp"
#include "ports/record_codec.hpp"

namespace overhead::pipe {
namespace {

using ports::Failure;
using ports::Record;
using ports::StampPatch;
using ports::StoreError;
using ports::UpsertFailure;

// A store in memory that refuses "invalid-*" records for good; `down` fails every call as a whole.
class FakeStore final : public ports::Store {
 public:
  void upsert(const Record& r) override { rows_[r.id] = r; }
  std::vector<UpsertFailure> upsert_batch(std::span<const Record> records) override {
    if (down) throw StoreError("fake: connection refused", Failure::transient);
    std::vector<UpsertFailure> out;
    for (std::size_t i = 0; i < records.size(); ++i) {
      if (records[i].id.starts_with("invalid-")) out.push_back({i, {false, "item too large"}});
      else upsert(records[i]);
    }
    return out;
  }
  std::size_t update_stamps(std::span<const StampPatch> patches) override {
    if (down) throw StoreError("fake: connection refused", Failure::transient);
    std::size_t found = 0;
    for (const auto& p : patches)
      if (auto it = rows_.find(p.id); it != rows_.end()) {
        if (p.publish_acked) it->second.publish_acked = p.publish_acked;
        ++found;
      }
    return found;
  }
  void scan(const std::string&, const std::function<void(const Record&)>& fn) override {
    for (auto& [id, r] : rows_) fn(r);
  }
  const std::string& url() const override { return url_; }

  bool down = false;
  std::map<std::string, Record> rows_;

 private:
  std::string url_ = "fake://store";
};

std::string record_body(const std::string& id) {
  Record r;
  r.experiment = "e";
  r.tokenizer = "t";
  r.experiment_tokenizer = "e#t";
  r.id = id;
  std::string body;
  ports::append_record_json(body, r);
  return body;
}

std::string stamps_body(const std::string& id) {
  StampPatch p;
  p.experiment_tokenizer = "e#t";
  p.id = id;
  p.publish_acked = 42;
  std::string body;
  ports::append_stamps_json(body, std::vector<StampPatch>{p});
  return body;
}

ports::RetryPolicy no_sleep() {
  ports::RetryPolicy p;
  p.attempts = 2;
  p.sleep = [](std::chrono::microseconds) {};
  return p;
}

TEST(StoreStep, StoresRecordsThenTheirPatchesAndDefersAPatchWithoutItsRecord) {
  FakeStore store;
  StoreStep step(store, no_sleep());
  // The patch comes first in the batch, its record after: the records are stored first.
  EXPECT_FALSE(step.add("m1", stamps_body("a")));
  EXPECT_FALSE(step.add("m2", record_body("a")));
  EXPECT_FALSE(step.add("m3", stamps_body("nowhere")));
  const auto bad = step.add("m4", "not json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->message_id, "m4");
  EXPECT_EQ(bad->kind, StoreFailureKind::bad_message);
  const auto failed = step.store();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].message_id, "m3");
  EXPECT_EQ(failed[0].kind, StoreFailureKind::stamps_deferred);
  EXPECT_EQ(failed[0].reason, "1 of 1 records are not stored yet");
  EXPECT_EQ(store.rows_.at("a").publish_acked, 42);
  EXPECT_STREQ(failure_kind_name(failed[0].kind), "stamps_deferred");
}

TEST(StoreStep, NamesTheRefusedRecordsAndEveryMessageOfAStoreThatStaysDown) {
  FakeStore store;
  StoreStep step(store, no_sleep());
  EXPECT_FALSE(step.add("m1", record_body("invalid-1")));
  EXPECT_FALSE(step.add("m2", record_body("b")));
  auto failed = step.store();
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].message_id, "m1");
  EXPECT_EQ(failed[0].kind, StoreFailureKind::store_failed);
  EXPECT_EQ(failed[0].reason, "fake://store: item too large");
  EXPECT_TRUE(store.rows_.contains("b"));

  store.down = true;
  EXPECT_FALSE(step.add("m3", stamps_body("b")));
  EXPECT_FALSE(step.add("m4", record_body("c")));
  failed = step.store();  // records first, then patches
  ASSERT_EQ(failed.size(), 2u);
  EXPECT_EQ(failed[0].message_id, "m4");
  EXPECT_EQ(failed[0].kind, StoreFailureKind::store_failed);
  EXPECT_EQ(failed[1].message_id, "m3");
  EXPECT_EQ(failed[1].kind, StoreFailureKind::stamps_failed);
  EXPECT_NE(failed[1].reason.find("connection refused"), std::string::npos);
}

}  // namespace
}  // namespace overhead::pipe
