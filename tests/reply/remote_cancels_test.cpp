// Cancellation over a shared queue, in one process on mem: queues: the control queue names, the
// `taken` event and the cancel message formats, and the whole round trip: a worker (QueueReplies
// with a control queue) names its control queue as it takes a request up, the gateway's receiver
// tells RemoteCancels, a cancel goes to that queue and the worker's ControlReceiver hands it on;
// also a cancel made before any worker took the request, one for a request taken again by
// another worker, none after the final reply, and none to a queue that is not a control queue.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "backends/queue_siblings.hpp"
#include "recording_path.hpp"
#include "reply/cancel_message.hpp"
#include "reply/control_receiver.hpp"
#include "reply/queue_replies.hpp"
#include "reply/remote_cancels.hpp"
#include "reply/reply_codec.hpp"
#include "reply/reply_receiver.hpp"

namespace {

using namespace overhead;
using namespace std::chrono_literals;

TEST(ControlQueueNames, AreBoundToTheirInputQueueAndAreNoReplyQueues) {
  const std::string input = "redis://:s3cret@127.0.0.1:6379/in";
  const std::string name = backends::control_queue_name(input, "w1.example-77");
  EXPECT_EQ(name, "in-ctl-w1_example-77");
  EXPECT_TRUE(backends::is_control_queue_of(input, name));
  EXPECT_FALSE(backends::is_reply_queue_of(input, name));  // a hostile item cannot make a worker answer there
  EXPECT_FALSE(backends::is_control_queue_of(input, backends::reply_queue_name(input, "gw")));
  EXPECT_FALSE(backends::is_control_queue_of(input, "in"));
  EXPECT_FALSE(backends::is_control_queue_of(input, "in-ctl-"));
  EXPECT_FALSE(backends::is_control_queue_of(input, "log-ctl-x"));
  EXPECT_FALSE(backends::is_control_queue_of("mem:", "x-ctl-y"));
  EXPECT_EQ(backends::control_queue_name(input, std::string(200, 'h')).size(), 80u);
}

TEST(CancelMessages, RoundTripAndNameTheLineTheyCannotRead) {
  std::string body;
  reply::append_cancel(body, "chatcmpl-1");
  reply::append_cancel(body, "quote\"d");
  body += "\n{\"nope\":1}";
  std::vector<std::string> ids;
  const auto errors = reply::decode_cancels(body, "ctl", [&](std::string&& id) { ids.push_back(std::move(id)); });
  EXPECT_EQ(ids, (std::vector<std::string>{"chatcmpl-1", "quote\"d"}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("ctl line 3"), std::string::npos) << errors[0];
}

TEST(TakenEvents, RoundTripThroughTheReplyCodec) {
  std::string body;
  reply::append_taken(body, "r1", "in-ctl-w1");
  std::vector<reply::ReplyEvent> events;
  EXPECT_TRUE(reply::decode_events(body, "m", [&](reply::ReplyEvent&& e) { events.push_back(std::move(e)); }).empty());
  ASSERT_EQ(events.size(), 1u);
  const auto* t = std::get_if<reply::Taken>(&events[0]);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->id, "r1");
  EXPECT_EQ(t->control, "in-ctl-w1");
}

// A gateway (reply queue, receiver, RemoteCancels) and workers (QueueReplies naming a control
// queue, ControlReceiver recording the cancels it gets) on mem: queues of one input.
struct Cancellation : testing::Test {
  std::string input = "mem:" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name());
  std::shared_ptr<ports::Queue> open(const std::string& name) { return backends::open_queue(backends::sibling_queue_url(input, name)); }

  struct Worker {
    std::string control;
    std::mutex mutex;
    std::vector<std::string> cancelled;
    std::unique_ptr<reply::QueueReplies> replies;
    std::unique_ptr<reply::ControlReceiver> receiver;
    std::vector<std::string> got() {
      std::lock_guard lock(mutex);
      return cancelled;
    }
  };
  std::unique_ptr<Worker> worker(const std::string& suffix) {
    auto w = std::make_unique<Worker>();
    w->control = backends::control_queue_name(input, suffix);
    w->replies = std::make_unique<reply::QueueReplies>(backends::open_queue_family(input),
                                                       64, reply::ReplyBatching{}, w->control);
    w->receiver = std::make_unique<reply::ControlReceiver>(open(w->control), [p = w.get()](const std::string& id) {
      std::lock_guard lock(p->mutex);
      p->cancelled.push_back(id);
    });
    return w;
  }
  // Waits up to 5 s for `w` to have been told `n` cancels.
  static std::vector<std::string> cancels_of(Worker& w, std::size_t n) {
    for (int i = 0; i < 500 && w.got().size() < n; ++i) std::this_thread::sleep_for(10ms);
    return w.got();
  }
  // Waits until the gateway has seen `n` taken events (RemoteCancels keeps no count of them: the
  // reply queue is empty and the receiver idle once they are read).
  void settle(reply::QueueReplies& r) {
    r.flush();
    for (int i = 0; i < 500 && reply_queue->counts().visible + reply_queue->counts().in_flight > 0; ++i) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(50ms);
  }

  std::string reply_name = backends::reply_queue_name(input, "gw");
  std::shared_ptr<ports::Queue> reply_queue = open(reply_name);
  reply::testing::RecordingPath box;
  reply::RemoteCancels remote{backends::open_queue_family(input)};
  reply::ReplyReceiver receiver{reply_queue, box, &remote};
};

TEST_F(Cancellation, ACancelReachesTheWorkerThatTookTheRequest) {
  auto w = worker("w1-1");
  w->replies->note("r1", reply_name);
  settle(*w->replies);
  remote.cancel("r1");
  EXPECT_EQ(cancels_of(*w, 1), std::vector<std::string>{"r1"});
  // The sender counts the cancel once its send has returned, which can be after the worker read
  // it (seen under ASan): wait for the count as for the cancel.
  for (int i = 0; i < 500 && remote.counts().sent < 1; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(remote.counts().sent, 1u);
}

TEST_F(Cancellation, ACancelBeforeAnyWorkerTookTheRequestIsSentWhenOneDoes) {
  auto w = worker("w1-2");
  remote.cancel("early");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(remote.counts().cancels, 0u);  // nobody to tell yet
  w->replies->note("early", reply_name);
  EXPECT_EQ(cancels_of(*w, 1), std::vector<std::string>{"early"});
}

TEST_F(Cancellation, ARequestTakenAgainByAnotherWorkerIsCancelledThereToo) {
  auto first = worker("w1-3");
  auto second = worker("w2-3");
  first->replies->note("r", reply_name);
  settle(*first->replies);
  remote.cancel("r");
  EXPECT_EQ(cancels_of(*first, 1).size(), 1u);
  // The first worker died; the item came back to the second one.
  second->replies->note("r", reply_name);
  EXPECT_EQ(cancels_of(*second, 1), std::vector<std::string>{"r"});
}

TEST_F(Cancellation, NothingIsSentOnceTheFinalReplyArrived) {
  auto w = worker("w1-4");
  w->replies->note("done", reply_name);
  ports::Record r;
  r.id = "done";
  r.experiment_tokenizer = "serve#phi-4";
  w->replies->deliver(reply::Reply::answered(r, "text", "stop"));
  EXPECT_TRUE(box.wait("done").ok());
  remote.cancel("done");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(remote.counts().cancels, 0u);
  EXPECT_TRUE(w->got().empty());
}

TEST_F(Cancellation, AQueueThatIsNotAControlQueueOfTheInputIsNeverWrittenTo) {
  // A worker (or anything that can write the reply queue) naming the gateway's own reply queue,
  // or the log queue, as its control queue.
  std::string body;
  reply::append_taken(body, "h1", reply_name);
  reply::append_taken(body, "h2", "log");
  ASSERT_TRUE(reply_queue->send_batch(std::span<const std::string>(&body, 1))[0].ok());
  for (int i = 0; i < 500 && remote.counts().refused < 2; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(remote.counts().refused, 2u);
  remote.cancel("h1");
  remote.cancel("h2");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(remote.counts().cancels, 0u);
  EXPECT_EQ(open("log")->counts().visible, 0u);
}

}  // namespace
