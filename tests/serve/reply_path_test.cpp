// The reply path on its own: the ReplyBox's states, waits, deadlines, cancel and bounded keeping,
// and the worker-side taps that deliver into it (a refusal before the dead letter, a record only
// once its sink confirmed it).
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "pipe/errors.hpp"
#include "pipe/processor.hpp"
#include "pipe/record_sink.hpp"
#include "serve/reply_box.hpp"
#include "serve/reply_taps.hpp"

namespace {

using namespace overhead;
using serve::Reply;
using serve::ReplyBox;
using serve::RequestInfo;
using serve::RequestState;
using Clock = std::chrono::steady_clock;

Reply ok_reply(const std::string& id, std::int64_t tokens) {
  Reply r;
  r.id = id;
  r.ok = true;
  r.record.id = id;
  r.record.token_count = tokens;
  return r;
}

TEST(ReplyBox, AWaiterGetsTheReplyDeliveredFromAnotherThread) {
  ReplyBox box;
  box.open("a", RequestInfo{"phi-4", "phi-4", 1, 2, false});
  EXPECT_EQ(box.queued(), 1u);
  std::thread worker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    box.deliver(ok_reply("a", 7));
  });
  const auto s = box.wait("a", Clock::now() + std::chrono::seconds(10));
  worker.join();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, RequestState::done);
  EXPECT_EQ(s->reply->record.token_count, 7);
  EXPECT_GT(s->replied_ns, 0);
  EXPECT_EQ(box.queued(), 0u);
  // A second delivery (a replayed item) changes nothing.
  Reply again = ok_reply("a", 99);
  box.deliver(again);
  EXPECT_EQ(box.find("a")->reply->record.token_count, 7);
}

TEST(ReplyBox, AWaitEndsAtItsDeadlineOrAtCancel) {
  ReplyBox box;
  box.open("slow", {});
  const auto start = Clock::now();
  EXPECT_FALSE(box.wait("slow", start + std::chrono::milliseconds(30)));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(30));
  EXPECT_FALSE(box.wait("unknown", Clock::now() + std::chrono::seconds(10)));  // no slot: at once
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    box.cancel_all();
  });
  EXPECT_FALSE(box.wait("slow", Clock::now() + std::chrono::seconds(30)));
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
  Reply failed;
  failed.id = "r4";
  failed.error_kind = "template_error";
  box.open("r4", RequestInfo{"m", "t", 0, 0, true});
  box.deliver(failed);
  EXPECT_EQ(box.find("r4")->state, RequestState::failed);
  EXPECT_FALSE(box.find("r2"));
}

TEST(ReplyTaps, ARefusalIsDeliveredAndStillThrownToTheWorker) {
  ReplyBox box;
  box.open("x", {});
  pipe::FunctionProcessor refusing([](const pipe::SourceRecord&, const std::string&) -> pipe::ProcessResult {
    throw pipe::ItemError("template_error", "System role not supported");
  });
  serve::ReplyingProcessor tap(refusing, box);
  pipe::SourceRecord src;
  src.id = "x";
  EXPECT_THROW((void)tap.process(src, "gemma-2-27b-it"), pipe::ItemError);
  const auto s = box.find("x");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->state, RequestState::failed);
  EXPECT_EQ(s->reply->error_kind, "template_error");
  EXPECT_EQ(s->reply->error_reason, "System role not supported");

  box.open("y", {});
  pipe::FunctionProcessor broken([](const pipe::SourceRecord&, const std::string&) -> pipe::ProcessResult {
    throw std::runtime_error("boom");
  });
  serve::ReplyingProcessor tap2(broken, box);
  src.id = "y";
  EXPECT_THROW((void)tap2.process(src, "phi-4"), std::runtime_error);
  EXPECT_EQ(box.find("y")->reply->error_kind, "processing_error");
}

// A sink that refuses every record, as a failing log queue would.
class RefusingSink final : public pipe::RecordSink {
 public:
  void put(const pipe::Record&) override { throw pipe::QueueError("mem: down", pipe::Failure::transient); }
  void put_stamps(std::span<const pipe::StampPatch>) override {}
};

TEST(ReplyTaps, ARecordIsAnAnswerOnlyOnceItsSinkConfirmedIt) {
  ReplyBox box;
  box.open("a", {});
  box.open("b", {});
  pipe::MemorySink memory;
  serve::ReplyingSink tap(memory, box);
  pipe::Record r;
  r.id = "a";
  r.token_count = 12;
  tap.put(r);
  EXPECT_EQ(box.find("a")->state, RequestState::done);
  EXPECT_EQ(box.find("a")->reply->record.token_count, 12);
  EXPECT_EQ(memory.take().size(), 1u);

  RefusingSink refusing;
  serve::ReplyingSink tap2(refusing, box);
  r.id = "b";
  EXPECT_THROW(tap2.put(r), pipe::QueueError);
  EXPECT_EQ(box.find("b")->state, RequestState::queued);  // the publisher retries; no answer yet
}

}  // namespace
