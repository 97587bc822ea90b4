// The worker's two lanes (pipe/lane_source.hpp): interactive items first, batch items only in idle
// capacity and within their in-flight bound, one batch item after a run of interactive polls, and
// acks reaching the queue each entry came from.
#include <gtest/gtest.h>

#include "backends/open.hpp"
#include "pipe/lane_source.hpp"

namespace overhead::pipe {
namespace {

using std::chrono::milliseconds;

struct Lanes {
  std::shared_ptr<ports::Queue> input = backends::open_queue("mem:");
  std::shared_ptr<ports::Queue> lane = backends::open_queue("mem:");
  LaneSource source;
  explicit Lanes(LaneRule rule)
      : source(std::make_shared<QueueSource>(input, milliseconds(10), std::chrono::hours(1)),
               std::make_shared<QueueSource>(lane, milliseconds(10), std::chrono::hours(1)), rule) {}
  void put(ports::Queue& q, int n, const std::string& tag) {
    for (int i = 0; i < n; ++i) {
      const std::string body = tag + std::to_string(i);
      ports::send_all(q, std::span<const std::string>(&body, 1));
    }
  }
};

std::vector<std::string> receipts(const std::vector<SourceEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.receipt);
  return out;
}

TEST(LaneSource, InteractiveItemsGoFirst) {
  Lanes l(LaneRule{4, 100, 10});
  l.put(*l.lane, 3, "b");
  l.put(*l.input, 2, "i");
  std::vector<SourceEntry> got;
  ASSERT_EQ(l.source.poll(10, milliseconds(0), got), PollResult::items);
  ASSERT_EQ(got.size(), 2u);
  for (const auto& e : got) EXPECT_EQ(e.body[0], 'i');
  (void)l.source.ack(receipts(got));
  ASSERT_EQ(l.source.poll(10, milliseconds(0), got), PollResult::items);
  ASSERT_EQ(got.size(), 3u) << "idle: the batch lane fills in";
  for (const auto& e : got) EXPECT_EQ(e.body[0], 'b');
  EXPECT_EQ(l.source.batch_in_flight(), 3u);
  EXPECT_TRUE(l.source.ack(receipts(got)).empty());
  EXPECT_EQ(l.source.batch_in_flight(), 0u);
  EXPECT_EQ(l.lane->counts().visible + l.lane->counts().in_flight, 0u) << "acked on the lane it came from";
}

TEST(LaneSource, BatchItemsStayWithinTheirBound) {
  Lanes l(LaneRule{2, 100, 10});
  l.put(*l.lane, 5, "b");
  std::vector<SourceEntry> got;
  ASSERT_EQ(l.source.poll(10, milliseconds(0), got), PollResult::items);
  EXPECT_EQ(got.size(), 2u);
  std::vector<SourceEntry> more;
  EXPECT_EQ(l.source.poll(10, milliseconds(0), more), PollResult::quiet) << "the bound is reached: nothing more from the lane";
  (void)l.source.ack(receipts(got));
  ASSERT_EQ(l.source.poll(10, milliseconds(0), more), PollResult::items);
  EXPECT_EQ(more.size(), 2u);
}

TEST(LaneSource, AFloorOfOneBatchItemUnderSteadyInteractiveLoad) {
  Lanes l(LaneRule{4, 3, 10});
  l.put(*l.lane, 5, "b");
  l.put(*l.input, 40, "i");
  int batch_seen = 0, polls = 0;
  for (; polls < 8; ++polls) {
    std::vector<SourceEntry> got;
    ASSERT_EQ(l.source.poll(2, milliseconds(0), got), PollResult::items);
    for (const auto& e : got) batch_seen += e.body[0] == 'b';
    (void)l.source.ack(receipts(got));
  }
  EXPECT_EQ(batch_seen, 2) << "one batch item after every 3 interactive polls";
}

TEST(LaneSource, AFewBatchItemsPerPoll) {
  Lanes l(LaneRule{8, 100, 2});
  l.put(*l.lane, 5, "b");
  std::vector<SourceEntry> got;
  ASSERT_EQ(l.source.poll(10, milliseconds(0), got), PollResult::items);
  EXPECT_EQ(got.size(), 2u);
}

TEST(LaneSource, DeadLettersReachTheirLane) {
  Lanes l(LaneRule{4, 100});
  l.put(*l.lane, 1, "b");
  std::vector<SourceEntry> got;
  ASSERT_EQ(l.source.poll(10, milliseconds(0), got), PollResult::items);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].receipt[0], 'b');
  l.source.extend(receipts(got), milliseconds(1000));  // no throw: the lane's receipt, untagged
  EXPECT_TRUE(l.source.ack(receipts(got)).empty());
}

}  // namespace
}  // namespace overhead::pipe
