// Each generation's share of the engine's time: 1/n of every second while n are in flight.
#include <gtest/gtest.h>

#include "pipe/engine_share.hpp"

namespace overhead::pipe {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(EngineShare, AGenerationAloneIsChargedItsWholeTime) {
  EngineShare s;
  const double a = s.begin(10 * kSecond);
  EXPECT_DOUBLE_EQ(s.end(13 * kSecond, a), 3.0);
}

TEST(EngineShare, OverlappingGenerationsShareTheTimeAndSumToTheBusyTime) {
  EngineShare s;
  // a: 0..4 s, b: 1..3 s, c: 6..7 s. 0-1 a alone, 1-3 a and b, 3-4 a alone, 6-7 c alone.
  const double a = s.begin(0);
  const double b = s.begin(1 * kSecond);
  const double sb = s.end(3 * kSecond, b);
  const double sa = s.end(4 * kSecond, a);
  const double c = s.begin(6 * kSecond);
  const double sc = s.end(7 * kSecond, c);
  EXPECT_DOUBLE_EQ(sb, 1.0);  // 2 s at half
  EXPECT_DOUBLE_EQ(sa, 3.0);  // 1 + 1 + 1
  EXPECT_DOUBLE_EQ(sc, 1.0);
  EXPECT_DOUBLE_EQ(sa + sb + sc, 5.0);  // the idle 4-6 s is nobody's
}

TEST(EngineShare, AStampOutOfOrderNeverRunsTimeBack) {
  EngineShare s;
  const double a = s.begin(5 * kSecond);
  EXPECT_DOUBLE_EQ(s.end(4 * kSecond, a), 0.0);
}

}  // namespace
}  // namespace overhead::pipe
