// GenerationCancels: a running generation's ticket is cancelled by its id; an id cancelled before
// its generation started is cancelled as it starts; an ended one is not reached; the ids
// remembered are bounded.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>

#include "pipe/generation_cancels.hpp"

namespace overhead::pipe {
using ports::DecodeTicket;
namespace {

struct CountingTicket final : DecodeTicket {
  std::atomic<int> cancels{0};
  void cancel() override { ++cancels; }
};

TEST(GenerationCancels, CancelsTheRunningGenerationOfAnId) {
  GenerationCancels c;
  auto a = std::make_shared<CountingTicket>(), b = std::make_shared<CountingTicket>();
  c.started("a", a);
  c.started("b", b);
  EXPECT_EQ(c.running(), 2u);
  EXPECT_TRUE(c.cancel("a"));
  EXPECT_EQ(a->cancels, 1);
  EXPECT_EQ(b->cancels, 0);
  c.ended("a");
  c.ended("a");  // idempotent
  EXPECT_EQ(c.running(), 1u);
}

TEST(GenerationCancels, AnIdCancelledBeforeItStartedIsCancelledAsItStarts) {
  GenerationCancels c;
  EXPECT_FALSE(c.cancel("queued"));
  auto t = std::make_shared<CountingTicket>();
  c.started("queued", t);
  EXPECT_EQ(t->cancels, 1);
  EXPECT_EQ(c.running(), 0u);
  // Once only: a later generation of the same id runs.
  auto again = std::make_shared<CountingTicket>();
  c.started("queued", again);
  EXPECT_EQ(again->cancels, 0);
}

TEST(GenerationCancels, AnEndedGenerationIsNotReachedAndTheRememberedIdsAreBounded) {
  GenerationCancels c(2);
  auto t = std::make_shared<CountingTicket>();
  c.started("done", t);
  c.ended("done");
  EXPECT_FALSE(c.cancel("x1"));
  EXPECT_FALSE(c.cancel("x2"));
  EXPECT_FALSE(c.cancel("x3"));  // x1 is forgotten
  auto x1 = std::make_shared<CountingTicket>(), x3 = std::make_shared<CountingTicket>();
  c.started("x1", x1);
  c.started("x3", x3);
  EXPECT_EQ(x1->cancels, 0);
  EXPECT_EQ(x3->cancels, 1);
  EXPECT_EQ(t->cancels, 0);
}

}  // namespace
}  // namespace overhead::pipe
