// The reply path over a shared queue, in one process on mem: queues: the sibling names and URLs of
// a reply queue, the reply codec, the worker side (QueueReplies: answers on the queue an item
// names, refuses a name that is not a reply queue of its input, forgets past its bound) and the
// gateway side (ReplyReceiver into a ReplyBox).
#include <gtest/gtest.h>

#include <chrono>
#include <span>
#include <stdexcept>
#include <string>

#include "backends/open.hpp"
#include "backends/queue_siblings.hpp"
#include "pipe/errors.hpp"
#include "serve/queue_replies.hpp"
#include "serve/reply_box.hpp"
#include "serve/reply_codec.hpp"
#include "serve/reply_receiver.hpp"

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

serve::Reply record_reply(const std::string& id) {
  serve::Reply r;
  r.id = id;
  r.ok = true;
  r.record.id = id;
  r.record.experiment_tokenizer = "serve#phi-4";
  r.record.experiment = "serve";
  r.record.tokenizer = "phi-4";
  r.record.model = "phi-4";
  r.record.token_count = 34;
  r.record.render_start = 1000;
  r.record.encode_end = 2000;
  r.record.output_tokens = 7;
  return r;
}

TEST(ReplyCodec, RecordsAndRefusalsRoundTrip) {
  const serve::Reply back = serve::decode_reply(serve::encode_reply(record_reply("r1")), "m");
  EXPECT_TRUE(back.ok);
  EXPECT_EQ(back.id, "r1");
  EXPECT_EQ(back.record.token_count, 34);
  EXPECT_EQ(back.record.render_start, 1000);
  EXPECT_EQ(back.record.output_tokens, 7);

  const serve::Reply failed{"r2", false, {}, "template_error", "System role not supported \"quoted\""};
  const serve::Reply f = serve::decode_reply(serve::encode_reply(failed), "m");
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.id, "r2");
  EXPECT_EQ(f.error_kind, "template_error");
  EXPECT_EQ(f.error_reason, failed.error_reason);

  // A reason quoting ill-formed UTF-8 still makes a reply (the bytes replaced), not an exception.
  const serve::Reply odd{"r3", false, {}, "bad_prompt", "content \xff\xfe"};
  EXPECT_EQ(serve::decode_reply(serve::encode_reply(odd), "m").id, "r3");

  EXPECT_THROW((void)serve::decode_reply("{\"failed\":{}}", "m"), std::runtime_error);
  EXPECT_THROW((void)serve::decode_reply("not json", "m"), std::runtime_error);
  EXPECT_THROW((void)serve::decode_reply("{\"stamps\":[]}", "m"), std::runtime_error);
}

pipe::SourceRecord item(const std::string& id, std::optional<std::string> reply_to) {
  pipe::SourceRecord s;
  s.id = id;
  s.reply_to = std::move(reply_to);
  return s;
}

struct SharedQueue : testing::Test {
  // A unique input name per test: mem: queues of one name are shared within the process.
  std::string input = "mem:" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name());
  serve::QueueReplies replies{[this](const std::string& name) { return backends::open_queue(backends::sibling_queue_url(input, name)); },
                              [this](std::string_view name) { return backends::is_reply_queue_of(input, name); }, 2};
  std::string reply_name = backends::reply_queue_name(input, "gw");
  std::shared_ptr<pipe::Queue> reply_queue = backends::open_queue(backends::sibling_queue_url(input, reply_name));
};

TEST_F(SharedQueue, AWorkersAnswerReachesTheWaitingGateway) {
  serve::ReplyBox box;
  box.open("r1", {});
  box.open("r2", {});
  serve::ReplyReceiver receiver(reply_queue, box);
  replies.note(item("r1", reply_name));
  replies.note(item("r2", reply_name));
  replies.deliver(record_reply("r1"));
  replies.deliver(serve::Reply{"r2", false, {}, "template_error", "no system role"});
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  const auto one = box.wait("r1", deadline);
  ASSERT_TRUE(one && one->reply);
  EXPECT_EQ(one->state, serve::RequestState::done);
  EXPECT_EQ(one->reply->record.token_count, 34);
  const auto two = box.wait("r2", deadline);
  ASSERT_TRUE(two && two->reply);
  EXPECT_EQ(two->state, serve::RequestState::failed);
  EXPECT_EQ(two->reply->error_kind, "template_error");
  EXPECT_EQ(replies.counts().sent, 2u);
  receiver.stop();
  EXPECT_EQ(receiver.received(), 2u);
  EXPECT_EQ(reply_queue->counts().visible + reply_queue->counts().in_flight, 0u);  // deleted once handed over
}

TEST_F(SharedQueue, ItemsWithoutAReplyQueueAreNotAnswered) {
  replies.note(item("plain", std::nullopt));
  replies.deliver(record_reply("plain"));
  replies.deliver(record_reply("never-noted"));
  EXPECT_EQ(replies.counts().sent, 0u);
  EXPECT_EQ(reply_queue->counts().visible, 0u);
}

TEST_F(SharedQueue, ANameThatIsNotAReplyQueueOfTheInputIsRefused) {
  const std::string log_name = "log";  // e.g. the log stream: a hostile item must not write there
  try {
    replies.note(item("x", log_name));
    FAIL() << "accepted";
  } catch (const pipe::ItemError& e) {
    EXPECT_EQ(e.kind(), "bad_message");
  }
  replies.deliver(record_reply("x"));
  EXPECT_EQ(replies.counts().sent, 0u);
}

TEST_F(SharedQueue, PastItsBoundTheOldestNoteIsForgotten) {
  replies.note(item("a", reply_name));
  replies.note(item("b", reply_name));
  replies.note(item("c", reply_name));  // bound 2: "a" goes
  replies.deliver(record_reply("a"));
  replies.deliver(record_reply("b"));
  replies.deliver(record_reply("c"));
  EXPECT_EQ(replies.counts().sent, 2u);
  EXPECT_EQ(reply_queue->counts().visible, 2u);
}

}  // namespace
