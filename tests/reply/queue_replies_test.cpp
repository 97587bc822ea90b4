// The reply path over a shared queue, in one process on mem: queues: the sibling names and URLs of
// a reply queue, the worker side (QueueReplies: answers on the queue an item names, refuses a name
// that is not a reply queue of its input, forgets past its bound, batches deltas by time and size)
// and the gateway side (ReplyReceiver into a ReplyPath).
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "backends/queue_siblings.hpp"
#include "ports/errors.hpp"
#include "ports/clock.hpp"
#include "recording_path.hpp"
#include "reply/queue_replies.hpp"
#include "reply/reply_receiver.hpp"

namespace {

using namespace overhead;
using namespace std::chrono_literals;

TEST(QueueSiblings, EachSchemeNamesItsQueueAndKeepsEverythingElse) {
  using backends::queue_name;
  using backends::sibling_queue_url;
  EXPECT_EQ(queue_name("redis://:s3cret@127.0.0.1:6379/in?visibility_ms=5000"), "in");
  EXPECT_EQ(sibling_queue_url("redis://:s3cret@127.0.0.1:6379/in?visibility_ms=5000", "in-reply-a"),
            "redis://:s3cret@127.0.0.1:6379/in-reply-a?visibility_ms=5000");
  EXPECT_EQ(sibling_queue_url("redis://h/in", "in-reply-a"), "redis://h/in-reply-a");
  EXPECT_EQ(queue_name("sqs://jobs?region=us-east-1&endpoint=http://127.0.0.1:9324"), "jobs");
  EXPECT_EQ(sibling_queue_url("sqs://jobs?region=us-east-1&endpoint=http://127.0.0.1:9324", "jobs-reply-a"),
            "sqs://jobs-reply-a?region=us-east-1&endpoint=http://127.0.0.1:9324");
  EXPECT_EQ(queue_name("sqlite-queue:q.db"), "queue");
  EXPECT_EQ(sibling_queue_url("sqlite-queue:q.db", "queue-reply-a"), "sqlite-queue:q.db?name=queue-reply-a");
  EXPECT_EQ(sibling_queue_url("sqlite-queue:q.db?visibility_ms=9", "queue-reply-a"),
            "sqlite-queue:q.db?visibility_ms=9&name=queue-reply-a");
  EXPECT_EQ(sibling_queue_url("sqlite-queue:q.db?name=in&visibility_ms=9", "in-reply-a"),
            "sqlite-queue:q.db?name=in-reply-a&visibility_ms=9");
  EXPECT_EQ(sibling_queue_url("mem:in?visibility_ms=100", "in-reply-a"), "mem:in-reply-a?visibility_ms=100");
  EXPECT_THROW((void)queue_name("mem:"), std::invalid_argument);
  EXPECT_THROW((void)sibling_queue_url("redis://h:1", "x"), std::invalid_argument);
}

TEST(QueueSiblings, ReplyNamesAreBoundToTheirInputQueue) {
  const std::string input = "redis://:s3cret@127.0.0.1:6379/in";
  const std::string name = backends::reply_queue_name(input, "gw.example:41");
  EXPECT_EQ(name, "in-reply-gw_example_41");  // only what SQS allows in a name
  EXPECT_TRUE(backends::is_reply_queue_of(input, name));
  EXPECT_FALSE(backends::is_reply_queue_of(input, "in"));          // the input itself
  EXPECT_FALSE(backends::is_reply_queue_of(input, "in-reply-"));   // no suffix
  EXPECT_FALSE(backends::is_reply_queue_of(input, "log-reply-x")); // another queue's
  EXPECT_FALSE(backends::is_reply_queue_of("mem:", "x-reply-y"));  // no name: no replies, no throw
  EXPECT_EQ(backends::reply_queue_name(input, std::string(200, 'h')).size(), 80u);
  try {
    (void)backends::reply_queue_name("redis://:s3cret@h/" + std::string(80, 'q'), "x");
    ADD_FAILURE() << "an input name leaving no room was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).find("s3cret"), std::string::npos) << e.what();
  }
}

reply::Reply record_reply(const std::string& id) {
  ports::Record r;
  r.id = id;
  r.experiment_tokenizer = "serve#phi-4";
  r.experiment = "serve";
  r.tokenizer = "phi-4";
  r.model = "phi-4";
  r.token_count = 34;
  r.render_start = 1000;
  r.encode_end = 2000;
  r.output_tokens = 7;
  return reply::Reply::answered(r, "the answer", "stop");
}


struct SharedQueue : testing::Test {
  // A unique input name per test: mem: queues of one name are shared within the process.
  std::string input = "mem:" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name());
  reply::QueueReplies replies{backends::open_queue_family(input), 2};
  std::string reply_name = backends::reply_queue_name(input, "gw");
  std::shared_ptr<ports::Queue> reply_queue = backends::open_queue(backends::sibling_queue_url(input, reply_name));
};

TEST_F(SharedQueue, AWorkersAnswerReachesTheWaitingGateway) {
  reply::testing::RecordingPath box;
  reply::ReplyReceiver receiver(reply_queue, box);
  replies.note("r1", reply_name);
  replies.note("r2", reply_name);
  replies.deliver(record_reply("r1"));
  replies.deliver(reply::Reply::refused("r2", "template_error", "no system role"));
  const reply::Reply one = box.wait("r1");
  EXPECT_TRUE(one.ok());
  EXPECT_EQ(one.record.token_count, 34);
  EXPECT_EQ(one.text, "the answer");
  EXPECT_EQ(one.finish_reason, "stop");
  const reply::Reply two = box.wait("r2");
  EXPECT_FALSE(two.ok());
  EXPECT_EQ(two.error_kind, "template_error");
  replies.flush();
  EXPECT_EQ(replies.counts().sent, 2u);
  receiver.stop();
  EXPECT_EQ(receiver.received(), 2u);
  EXPECT_EQ(reply_queue->counts().visible + reply_queue->counts().in_flight, 0u);  // deleted once handed over
}

TEST_F(SharedQueue, ItemsWithoutAReplyQueueAreNotAnswered) {
  replies.note("plain", std::nullopt);
  replies.deliver(record_reply("plain"));
  replies.deliver(record_reply("never-noted"));
  replies.flush();
  EXPECT_EQ(replies.counts().sent, 0u);
  EXPECT_EQ(reply_queue->counts().visible, 0u);
}

TEST_F(SharedQueue, ANameThatIsNotAReplyQueueOfTheInputIsRefused) {
  const std::string log_name = "log";  // e.g. the log stream: a hostile item must not write there
  try {
    replies.note("x", log_name);
    FAIL() << "accepted";
  } catch (const ports::ItemError& e) {
    EXPECT_EQ(e.kind(), "bad_message");
  }
  replies.deliver(record_reply("x"));
  replies.flush();
  EXPECT_EQ(replies.counts().sent, 0u);
}

TEST_F(SharedQueue, PastItsBoundTheOldestNoteIsForgotten) {
  replies.note("a", reply_name);
  replies.note("b", reply_name);
  replies.note("c", reply_name);  // bound 2: "a" goes
  replies.deliver(record_reply("a"));
  replies.deliver(record_reply("b"));
  replies.deliver(record_reply("c"));
  replies.flush();
  EXPECT_EQ(replies.counts().sent, 2u);
  EXPECT_GE(reply_queue->counts().visible, 1u);
}

// The batching rule: the first delta of an answer and the final reply leave at once; the deltas
// between them wait for the window and leave together, merged into one event per stream.
TEST_F(SharedQueue, DeltasAreBatchedByTimeAndTheFirstOneIsNotDelayed) {
  reply::QueueReplies batched{backends::open_queue_family(input), 16,
                              reply::ReplyBatching{std::chrono::milliseconds(300), 64 * 1024}};
  reply::testing::RecordingPath box;
  reply::ReplyReceiver receiver(reply_queue, box);
  batched.note("s", reply_name);
  const std::int64_t start = ports::monotonic_ns();
  batched.text("s", "w-1", 0, "He");
  // The first piece arrives well before the window ends.
  while (box.deltas().empty() && ports::monotonic_ns() - start < 5'000'000'000) std::this_thread::sleep_for(1ms);
  ASSERT_EQ(box.deltas().size(), 1u);
  EXPECT_LT(ports::monotonic_ns() - start, 250'000'000);
  const std::string words[] = {"llo", ", ", "wor", "ld"};
  std::int64_t offset = 2;
  for (const auto& w : words) {
    batched.text("s", "w-1", offset, w);
    offset += static_cast<std::int64_t>(w.size());
  }
  batched.deliver(reply::Reply::answered(record_reply("s").record, "Hello, world", "stop", "w-1"));
  const reply::Reply done = box.wait("s");
  EXPECT_TRUE(done.ok());
  EXPECT_TRUE(done.text.empty());  // streamed: the deltas carried it
  EXPECT_EQ(done.text_bytes, 12);
  const auto deltas = box.deltas();
  ASSERT_EQ(deltas.size(), 2u);  // four pieces in one event, sent with the final reply
  EXPECT_EQ(deltas[1].offset, 2);
  EXPECT_EQ(deltas[1].text, "llo, world");
  batched.flush();
  EXPECT_EQ(batched.counts().messages, 2u);
  EXPECT_EQ(batched.counts().deltas, 5u);
}

// A delta that comes when nothing waits in the outbox (the previous ones were sent, the sender is
// idle) leaves within the window, not with the final reply: the sender is woken to start one.
TEST_F(SharedQueue, ALaterDeltaAfterAQuietSpellLeavesWithinTheWindow) {
  reply::QueueReplies batched{backends::open_queue_family(input), 16,
                              reply::ReplyBatching{std::chrono::milliseconds(50), 64 * 1024}};
  reply::testing::RecordingPath box;
  reply::ReplyReceiver receiver(reply_queue, box);
  batched.note("q", reply_name);
  batched.text("q", "w-1", 0, "first");
  for (int i = 0; i < 500 && box.deltas().empty(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(box.deltas().size(), 1u);
  std::this_thread::sleep_for(200ms);  // the sender has nothing left to send
  batched.text("q", "w-1", 5, " second");
  for (int i = 0; i < 300 && box.deltas().size() < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(box.deltas().size(), 2u) << "the second delta waited for something else to wake the sender";
  EXPECT_EQ(box.deltas()[1].text, " second");
}

}  // namespace
