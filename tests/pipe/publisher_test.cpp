// The log publisher's failure paths: retries with exponential backoff, then a dead letter that
// is counted and reported as not ok; and the backpressure bound of the async pool.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <set>

#include "ports/errors.hpp"
#include "pipe/publisher.hpp"

namespace overhead::pipe {
using ports::Failure;
using ports::QueueError;
using ports::Record;
using ports::RetryPolicy;
using ports::StampPatch;
namespace {

// A sink that fails the first `failures` puts of every record id (or all of them: -1), and can
// be held shut to fill the publisher.
class FlakySink final : public RecordSink {
 public:
  explicit FlakySink(int failures) : failures_(failures) {}
  void put(const Record& r) override {
    std::unique_lock lock(m_);
    open_cv_.wait(lock, [&] { return open_; });
    if (failures_ < 0 || tries_[r.id]++ < failures_) throw std::runtime_error("sink unavailable");
    stored_.insert(r.id);
  }
  void put_stamps(std::span<const StampPatch>) override {
    if (failures_ < 0) throw std::runtime_error("sink unavailable");
  }
  void set_open(bool open) {
    {
      std::lock_guard lock(m_);
      open_ = open;
    }
    open_cv_.notify_all();
  }
  std::set<std::string> stored() {
    std::lock_guard lock(m_);
    return stored_;
  }

 private:
  int failures_;
  std::mutex m_;
  std::condition_variable open_cv_;
  bool open_ = true;
  std::map<std::string, int> tries_;
  std::set<std::string> stored_;
};

struct Listener final : PublishListener {
  std::mutex m;
  std::map<std::uintptr_t, bool> results;
  void on_published(std::uintptr_t token, bool ok, std::int64_t acked) override {
    EXPECT_GT(acked, 0);
    std::lock_guard lock(m);
    results[token] = ok;
  }
};

Record rec(const std::string& id) {
  Record r;
  r.id = id;
  r.tokenizer = "t";
  r.experiment_tokenizer = "e#t";
  return r;
}

RetryPolicy recording_policy(std::vector<std::chrono::microseconds>& sleeps, std::mutex& m, int attempts = 4) {
  RetryPolicy p;
  p.attempts = attempts;
  p.first_backoff = std::chrono::microseconds(100);
  p.max_backoff = std::chrono::microseconds(250);
  p.sleep = [&sleeps, &m](std::chrono::microseconds d) {
    std::lock_guard lock(m);
    sleeps.push_back(d);
  };
  return p;
}

TEST(SyncPublisher, RetriesWithBackoffThenSucceeds) {
  FlakySink sink(2);
  DeadLetterSink dead;
  Listener listener;
  std::vector<std::chrono::microseconds> sleeps;
  std::mutex m;
  SyncPublisher pub(sink, dead, recording_policy(sleeps, m), &listener);
  pub.publish(rec("a"), 1);
  EXPECT_TRUE(listener.results.at(1));
  EXPECT_EQ(sink.stored().count("a"), 1u);
  EXPECT_EQ(pub.stats().retries, 2u);
  EXPECT_EQ(pub.stats().failed, 0u);
  ASSERT_EQ(sleeps.size(), 2u);
  EXPECT_EQ(sleeps[0].count(), 100);
  EXPECT_EQ(sleeps[1].count(), 200);
  EXPECT_EQ(dead.total(), 0u);
}

TEST(SyncPublisher, GivesUpAfterLastTryAndDeadLettersTheRecord) {
  FlakySink sink(-1);
  DeadLetterSink dead;
  Listener listener;
  std::vector<std::chrono::microseconds> sleeps;
  std::mutex m;
  SyncPublisher pub(sink, dead, recording_policy(sleeps, m), &listener);
  pub.publish(rec("a"), 7);
  EXPECT_FALSE(listener.results.at(7));
  EXPECT_EQ(pub.stats().failed, 1u);
  EXPECT_EQ(pub.stats().published, 0u);
  ASSERT_EQ(sleeps.size(), 3u);  // 4 tries, 3 waits, capped at max_backoff
  EXPECT_EQ(sleeps[2].count(), 250);
  ASSERT_EQ(dead.total(), 1u);
  const auto letters = dead.letters();
  EXPECT_EQ(letters[0].kind, "publish_failed");
  EXPECT_NE(letters[0].reason.find("sink unavailable"), std::string::npos);
  EXPECT_NE(letters[0].payload.find("\"id\":\"a\""), std::string::npos);
  EXPECT_EQ(dead.counts().at("publish_failed"), 1u);

  const StampPatch p[] = {{"e#t", "a", 1, 2}};
  pub.publish_stamps(p);
  EXPECT_EQ(pub.stats().stamp_failures, 1u);
  EXPECT_EQ(dead.counts().at("stamps_failed"), 1u);
}

TEST(SyncPublisher, APermanentErrorIsNotRetried) {
  struct DeniedSink final : RecordSink {
    int puts = 0;
    void put(const Record&) override {
      ++puts;
      throw QueueError("log queue: access denied", Failure::permanent);
    }
    void put_stamps(std::span<const StampPatch>) override {}
  } sink;
  DeadLetterSink dead;
  Listener listener;
  std::vector<std::chrono::microseconds> sleeps;
  std::mutex m;
  SyncPublisher pub(sink, dead, recording_policy(sleeps, m), &listener);
  pub.publish(rec("a"), 1);
  EXPECT_FALSE(listener.results.at(1));
  EXPECT_EQ(sink.puts, 1);
  EXPECT_TRUE(sleeps.empty());
  EXPECT_EQ(pub.stats().retries, 0u);
  ASSERT_EQ(dead.total(), 1u);
  EXPECT_NE(dead.letters()[0].reason.find("after 1 try: log queue: access denied"), std::string::npos)
      << dead.letters()[0].reason;
}

TEST(AsyncPublisher, EveryRecordSettlesOnceEvenWithFailures) {
  FlakySink sink(1);
  DeadLetterSink dead;
  Listener listener;
  std::vector<std::chrono::microseconds> sleeps;
  std::mutex m;
  AsyncPublisher pub(sink, dead, recording_policy(sleeps, m), &listener, 4);
  for (int i = 0; i < 200; ++i) pub.publish(rec(std::to_string(i)), static_cast<std::uintptr_t>(i + 1));
  pub.flush();
  EXPECT_EQ(listener.results.size(), 200u);
  for (auto& [token, ok] : listener.results) EXPECT_TRUE(ok) << token;
  EXPECT_EQ(sink.stored().size(), 200u);
  EXPECT_EQ(pub.stats().retries, 200u);
}

TEST(AsyncPublisher, BackpressureBoundsOutstandingRecords) {
  FlakySink sink(0);
  sink.set_open(false);  // every put blocks: threads fill up, then the queue, then publish() waits
  DeadLetterSink dead;
  Listener listener;
  AsyncPublisher pub(sink, dead, RetryPolicy{}, &listener, 3, 5);
  std::atomic<int> accepted{0};
  std::thread producer([&] {
    for (int i = 0; i < 50; ++i) {
      pub.publish(rec(std::to_string(i)), static_cast<std::uintptr_t>(i + 1));
      accepted.fetch_add(1);
    }
  });
  // Wait until the producer is blocked: accepted stops at threads + capacity.
  for (int i = 0; i < 200 && accepted.load() < 8; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(accepted.load(), 8);
  EXPECT_LE(pub.stats().max_outstanding, 8u);
  sink.set_open(true);
  producer.join();
  pub.flush();
  EXPECT_EQ(sink.stored().size(), 50u);
  EXPECT_LE(pub.stats().max_outstanding, 8u);
}

TEST(AsyncPublisher, AbortDropsWhatWasNotDelivered) {
  FlakySink sink(0);
  sink.set_open(false);
  DeadLetterSink dead;
  Listener listener;
  AsyncPublisher pub(sink, dead, RetryPolicy{}, &listener, 1, 10);
  for (int i = 0; i < 5; ++i) pub.publish(rec(std::to_string(i)), static_cast<std::uintptr_t>(i + 1));
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    sink.set_open(true);
  });
  pub.abort();
  opener.join();
  EXPECT_LE(sink.stored().size(), 1u);  // at most the one being delivered when abort came
}

}  // namespace
}  // namespace overhead::pipe
