// Burst arrivals (gamma gaps with a stated CV) against the known effect: the drawn gaps have the
// stated rate and CV; at the same mean rate the waits and the p99 rise with the CV; at CV = 1 the
// gamma process queues as Poisson does (Pollaczek-Khinchine for a fixed service time).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "cost/simulator.hpp"

namespace overhead::cost {
namespace {

constexpr double kRate = 0.6, kService = 1.0, kRho = kRate * kService;

SimConfig burst(double cv, std::size_t requests = 100'000, std::uint64_t seed = 7) {
  SimConfig c;
  c.arrival_rate = kRate;
  c.arrivals = Arrivals::gamma;
  c.arrival_cv = cv;
  c.requests = requests;
  c.seed = seed;
  c.workload = {{200, 400}};
  c.stages = {{"cpu", 1, [](const SimRequest&, double, std::mt19937_64&) { return kService; }}};
  return c;
}

TEST(Bursts, GapsHaveTheStatedRateAndCv) {
  for (double cv : {0.5, 1.0, 2.0, 4.0}) {
    const std::size_t n = 100'000;
    const auto r = simulate(burst(cv, n));
    // The sample mean gap is off by cv / sqrt(n) relative (one sigma); allow five.
    const double sigma = cv / std::sqrt(static_cast<double>(n));
    EXPECT_NEAR(r.arrival_rate, kRate, 5 * sigma * kRate) << cv;
    EXPECT_NEAR(r.arrival_cv, cv, std::max(0.02, 10 * sigma) * cv) << cv;
  }
}

TEST(Bursts, CvOneQueuesAsPoisson) {
  const auto gamma = simulate(burst(1.0));
  SimConfig poisson = burst(1.0);
  poisson.arrivals = Arrivals::poisson;
  poisson.seed = 11;  // a different stream: equal only in distribution
  const auto p = simulate(poisson);
  const double pk = kRho * kService / (2 * (1 - kRho));  // 0.75 s, M/D/1
  EXPECT_NEAR(gamma.stages[0].wait_s.mean, pk, 0.05 * pk);
  EXPECT_NEAR(p.stages[0].wait_s.mean, pk, 0.05 * pk);
  EXPECT_NEAR(gamma.latency_s.p99, p.latency_s.p99, 0.05 * p.latency_s.p99);
  EXPECT_NEAR(p.arrival_cv, 1.0, 0.02);
}

TEST(Bursts, P99RisesWithTheCvAtTheSameRate) {
  double last_p99 = 0, last_wait = 0;
  for (double cv : {0.5, 1.0, 2.0, 4.0}) {
    const auto r = simulate(burst(cv));
    EXPECT_NEAR(r.stages[0].utilization, kRho, 0.02) << cv;  // same load, only burstier
    EXPECT_GT(r.latency_s.p99, 1.3 * last_p99) << cv;
    EXPECT_GT(r.stages[0].wait_s.mean, 1.5 * last_wait) << cv;
    last_p99 = r.latency_s.p99;
    last_wait = r.stages[0].wait_s.mean;
  }
}

TEST(Bursts, NonPositiveCvIsRefused) {
  EXPECT_THROW(simulate(burst(0.0, 10)), CostError);
  EXPECT_THROW(simulate(burst(-1.0, 10)), CostError);
}

}  // namespace
}  // namespace overhead::cost

namespace overhead::cost {
namespace {

// Queue depth over time: an overloaded stage (arrivals at 2/s, one server of 1 s) grows by about
// (2 - 1) requests per second of simulated time; a stable one stays within its own maximum.
TEST(QueueDepth, OverloadedStageGrowsAtArrivalMinusServiceRate) {
  SimConfig c = burst(1.0, 40'000);
  c.arrivals = Arrivals::poisson;
  c.arrival_rate = 2.0;
  c.depth_samples = 20;
  const auto r = simulate(c);
  ASSERT_EQ(r.depth_times.size(), 20u);
  ASSERT_EQ(r.stages[0].depth.size(), 20u);
  // Arrivals end at about 20,000 s; by then (2 - 1) x 20,000 wait. The last instant (the last
  // departure) has an empty queue.
  const std::size_t half = 9;  // the 10th sample, at half the span (~20,000 s)
  EXPECT_NEAR(r.stages[0].depth[half], r.depth_times[half] * 1.0, 0.05 * r.depth_times[half]);
  EXPECT_LT(r.stages[0].depth[2], r.stages[0].depth[5]);
  EXPECT_EQ(r.stages[0].depth.back(), 0.0);
}

TEST(QueueDepth, StableStageStaysWithinItsMaximum) {
  const auto r = simulate(burst(1.0, 40'000));
  ASSERT_EQ(r.stages[0].depth.size(), 50u);
  for (double d : r.stages[0].depth) {
    EXPECT_GE(d, 0.0);
    EXPECT_LE(d, static_cast<double>(r.stages[0].max_queue_length));
  }
}

}  // namespace
}  // namespace overhead::cost
