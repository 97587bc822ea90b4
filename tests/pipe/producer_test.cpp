// The producer against a queue's size limit: an item too large for the queue is dead-lettered as
// prompt_too_large and the others are sent.
#include <gtest/gtest.h>

#include "backends/open.hpp"
#include "pipe/producer.hpp"
#include "fake_processor.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using ports::QueueError;
namespace {

TEST(Producer, AnItemOverTheQueueLimitIsDeadLetteredAndTheRestIsSent) {
  auto q = backends::open_queue("mem:?max_message_bytes=2000");
  std::vector<std::shared_ptr<const SourceRecord>> recs;
  recs.push_back(parse_source_line(testing::source_line("small"), 1));
  recs.push_back(parse_source_line(testing::source_line("big", std::string(4000, 'x')), 2));
  recs.push_back(parse_source_line(testing::source_line("small2"), 3));
  DeadLetterSink dead;
  const ProducerStats s = produce(recs, {"t1", "t2"}, *q, 10, &dead);
  EXPECT_EQ(s.messages, 4u);
  EXPECT_EQ(s.failed, 2u);
  EXPECT_EQ(q->counts().visible, 4u);
  ASSERT_EQ(dead.total(), 2u);
  EXPECT_EQ(dead.counts().at("prompt_too_large"), 2u);
  EXPECT_NE(dead.letters()[0].origin.find("line 2"), std::string::npos);
  EXPECT_NE(dead.letters()[0].reason.find("message limit of 2000"), std::string::npos);
  EXPECT_THROW(produce(recs, {"t1"}, *q, 10, nullptr), QueueError);  // nowhere to put it
}

}  // namespace
}  // namespace overhead::pipe
