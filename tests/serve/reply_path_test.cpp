// The gateway's side of the reply path: the ReplyBox's states, its readers (watch, then
// poll_stream), deadlines, cancel and bounded keeping. (The worker's side:
// tests/pipe/worker_replies_test.cpp and tests/reply/.)
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "serve/reply_box.hpp"

namespace {

using namespace overhead;
using serve::Reply;
using serve::ReplyBox;
using serve::RequestInfo;
using serve::RequestState;
using serve::RequestSnapshot;
using serve::StreamProgress;
using Clock = std::chrono::steady_clock;

// A reader that blocks, built as the gateway's readers are: a watcher wakes it, poll_stream takes
// what is new. The progress past `have` bytes; empty at the deadline, on cancel_all() or for an
// unknown (or forgotten) id.
std::optional<StreamProgress> next_progress(ReplyBox& box, const std::string& id, std::size_t have,
                                            Clock::time_point deadline) {
  struct Wake {
    std::mutex mutex;
    std::condition_variable cv;
    bool woken = false;
  };
  const auto wake = std::make_shared<Wake>();
  box.watch(id, [wake] {
    {
      std::lock_guard lock(wake->mutex);
      wake->woken = true;
    }
    wake->cv.notify_all();
  });
  while (true) {
    if (auto p = box.poll_stream(id, have)) {
      if (p->closed) return std::nullopt;
      return p;
    }
    std::unique_lock lock(wake->mutex);
    if (!wake->cv.wait_until(lock, deadline, [&] { return wake->woken; })) return std::nullopt;
    wake->woken = false;
  }
}

// The request's final state, waited for as a synchronous answer waits: empty at the deadline, on
// cancel_all() or for an unknown id.
std::optional<RequestSnapshot> final_state(ReplyBox& box, const std::string& id, Clock::time_point deadline) {
  std::size_t have = 0;
  while (const auto p = next_progress(box, id, have, deadline)) {
    if (p->finished) return p->finished;
    have += p->text.size();
  }
  return std::nullopt;
}

Reply ok_reply(const std::string& id, std::int64_t tokens) {
  ports::Record record;
  record.id = id;
  record.token_count = tokens;
  return Reply::answered(record, "", "length");
}

TEST(ReplyBox, AWaiterGetsTheReplyDeliveredFromAnotherThread) {
  ReplyBox box;
  box.open("a", RequestInfo{"phi-4", "phi-4", 1, 2, false});
  EXPECT_EQ(box.queued(), 1u);
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    box.deliver(ok_reply("a", 7));
  });
  const auto s = final_state(box, "a", Clock::now() + std::chrono::seconds(10));
  worker.join();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, RequestState::done);
  EXPECT_EQ(s->reply->record.token_count, 7);
  EXPECT_GT(s->replied_ns, 0);
  EXPECT_EQ(box.queued(), 0u);
  // A second delivery (a replayed item) changes nothing.
  box.deliver(ok_reply("a", 99));
  EXPECT_EQ(box.find("a")->reply->record.token_count, 7);
}

TEST(ReplyBox, AWaitEndsAtItsDeadlineOrAtCancel) {
  ReplyBox box;
  box.open("slow", {});
  const auto start = Clock::now();
  EXPECT_FALSE(final_state(box, "slow", start + std::chrono::milliseconds(30)));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(30));
  EXPECT_FALSE(final_state(box, "unknown", Clock::now() + std::chrono::seconds(10)));  // no slot: at once
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    box.cancel_all();
  });
  EXPECT_FALSE(final_state(box, "slow", Clock::now() + std::chrono::seconds(30)));
  canceller.join();
  EXPECT_TRUE(box.cancelled());
  EXPECT_EQ(box.find("slow")->state, RequestState::queued);
  box.forget("slow");
  EXPECT_EQ(box.queued(), 0u);
  EXPECT_FALSE(box.find("slow"));
}

TEST(ReplyBox, FinishedAsynchronousRequestsAreKeptUpToTheBound) {
  ReplyBox box(2);
  for (const char* id : {"r1", "r2", "r3"}) {
    box.open(id, RequestInfo{"m", "t", 0, 0, true});
    box.deliver(ok_reply(id, 1));
  }
  EXPECT_FALSE(box.find("r1"));  // the oldest finished one went first
  EXPECT_TRUE(box.find("r2"));
  EXPECT_TRUE(box.find("r3"));
  box.open("r4", RequestInfo{"m", "t", 0, 0, true});
  box.deliver(Reply::refused("r4", "template_error", ""));
  EXPECT_EQ(box.find("r4")->state, RequestState::failed);
  EXPECT_FALSE(box.find("r2"));
}

// Streamed text is taken exactly once and in order, by byte offset, whatever the transport did.
TEST(ReplyBox, StreamedTextArrivesOnceAndInOrder) {
  ReplyBox box;
  box.open("s", {});
  box.text("s", "w-1", 0, "Hel");
  box.text("s", "w-1", 0, "Hel");     // delivered twice: dropped
  box.text("s", "w-1", 6, " world");  // past a gap: held back
  box.text("s", "w-1", 3, "lo, ");    // fills the gap (and overlaps the held piece by one byte)
  const auto p = next_progress(box, "s", 0, Clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->text, "Hello, world");
  EXPECT_FALSE(p->restarted);
  EXPECT_FALSE(p->finished);
  // Over a queue the final reply leaves the text to the deltas and says how long it is.
  Reply done = ok_reply("s", 3);
  done.attempt = "w-1";
  done.text_bytes = 13;
  box.deliver(done);
  EXPECT_EQ(box.find("s")->state, RequestState::queued) << "one byte is still on its way";
  box.text("s", "w-1", 12, "!");
  const auto s = box.find("s");
  EXPECT_EQ(s->state, RequestState::done);
  EXPECT_EQ(s->reply->text, "Hello, world!");
  const auto last = next_progress(box, "s", 12, Clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(last && last->finished);
  EXPECT_EQ(last->text, "!");
}

// A reader with no thread of its own: the box calls its watcher after each change, outside the
// box's lock (the watcher reads the box again), and poll_stream never waits.
TEST(ReplyBox, AWatcherIsCalledOnEachChangeAndPollsWithoutWaiting) {
  ReplyBox box;
  box.open("s", {});
  std::size_t have = 0;
  std::string seen;
  int calls = 0;
  bool finished = false, closed = false;
  box.watch("s", [&] {
    ++calls;
    const auto p = box.poll_stream("s", have);  // takes the box's lock: would deadlock if called under it
    if (!p) return;
    seen += p->text;
    have += p->text.size();
    finished = finished || p->finished.has_value();
    closed = closed || p->closed;
  });
  EXPECT_EQ(calls, 1) << "called once at once, so that nothing before the watch is missed";
  EXPECT_FALSE(box.poll_stream("s", 0)) << "nothing yet: no waiting, no progress";
  box.text("s", "w-1", 0, "Hel");
  box.text("s", "w-1", 3, "lo");
  EXPECT_EQ(seen, "Hello");
  EXPECT_EQ(calls, 3);
  Reply done = ok_reply("s", 2);
  done.attempt = "w-1";
  done.text = "Hello!";
  box.deliver(done);
  EXPECT_EQ(seen, "Hello!");
  EXPECT_TRUE(finished);
  box.forget("s");
  const auto gone = box.poll_stream("s", 0);
  ASSERT_TRUE(gone);
  EXPECT_TRUE(gone->closed) << "a forgotten request";

  // A shutdown wakes every watcher; its poll says closed.
  box.open("t", {});
  box.watch("t", [&] {
    if (const auto p = box.poll_stream("t", 0)) closed = closed || p->closed;
  });
  EXPECT_FALSE(closed);
  box.cancel_all();
  EXPECT_TRUE(closed);
}

// A worker that dies mid-stream: the item comes back and is generated again under another attempt.
// The text already passed on cannot be continued by it: the reader is told, never spliced.
TEST(ReplyBox, AnotherGenerationAfterTextWentOutIsARestartNotASplice) {
  ReplyBox box;
  box.open("s", {});
  box.text("s", "w-1", 0, "The first ");
  box.text("s", "w-2", 0, "A second ");
  const auto p = next_progress(box, "s", 10, Clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->restarted);
  // The second generation's answer still completes the request for a reader that waits for it whole.
  Reply done = ok_reply("s", 3);
  done.attempt = "w-2";
  done.text = "A second answer.";
  done.text_bytes = 16;
  box.deliver(done);
  EXPECT_EQ(box.find("s")->reply->text, "A second answer.");
  const auto end = next_progress(box, "s", 10, Clock::now() + std::chrono::seconds(1));
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->restarted) << "its text does not begin with what the reader has";
}

// Issue 21, defect 2: a request nobody answers fails with `timeout` and frees its place.
TEST(ReplyBox, ARequestNobodyAnswersTimesOutAndIsNoLongerQueued) {
  ReplyBox box(10, std::chrono::milliseconds(50));
  box.open("lost", RequestInfo{"m", "t", 0, 0, true});
  EXPECT_EQ(box.queued(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(box.queued(), 0u);
  const auto s = box.find("lost");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, RequestState::failed);
  EXPECT_EQ(s->reply->error_kind, serve::kTimeoutKind);
  box.deliver(ok_reply("lost", 1));  // a late answer changes nothing
  EXPECT_EQ(box.find("lost")->state, RequestState::failed);
}

}  // namespace
