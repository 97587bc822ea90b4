// Capacity planning against M/M/c, where the answer can be worked out by hand: Poisson arrivals at
// 2.5/s and exponential service of mean 1 s. With c servers the sojourn time T = Wq + S has
//   P(T > t) = (1 - C) e^{-mu t} + C (theta e^{-mu t} - mu e^{-theta t}) / (theta - mu),
// C the Erlang C probability of waiting and theta = c mu - lambda. Its p99 is 9.89 s for c = 3,
// 5.07 s for c = 4, 4.69 s for c = 5 and 4.62 s for c = 6 (computed below, not typed in).
#include "cost/capacity.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace overhead::cost {
namespace {

constexpr double kLambda = 2.5, kMu = 1.0;

double erlang_c(int c, double a) {
  double sum = 0, term = 1;
  for (int k = 0; k < c; ++k) {
    sum += term;
    term *= a / (k + 1);
  }
  const double top = term * c / (c - a);  // a^c / c! * c / (c - a)
  return top / (sum + top);
}

double mmc_p99(int c) {
  const double C = erlang_c(c, kLambda / kMu), theta = c * kMu - kLambda;
  const auto tail = [&](double t) {
    return (1 - C) * std::exp(-kMu * t) + C * (theta * std::exp(-kMu * t) - kMu * std::exp(-theta * t)) / (theta - kMu);
  };
  double lo = 0, hi = 100;
  for (int i = 0; i < 200; ++i) (tail((lo + hi) / 2) > 0.01 ? lo : hi) = (lo + hi) / 2;
  return lo;
}

ServiceTime exponential_cpu() {
  return [](const SimRequest&, double, std::mt19937_64& rng) { return std::exponential_distribution<double>(kMu)(rng); };
}

CapacityQuery query(double target) {
  CapacityQuery q;
  q.traffic.arrival_rate = kLambda;
  q.target_p99_s = target;
  q.traffic.requests = 150'000;
  q.traffic.seed = 11;
  q.traffic.workload = {{200, 400}};
  return q;
}

TEST(Capacity, HandComputedTailsAreWhatTheTestAssumes) {
  EXPECT_NEAR(mmc_p99(3), 9.886, 0.01);
  EXPECT_NEAR(mmc_p99(4), 5.068, 0.01);
  EXPECT_NEAR(mmc_p99(5), 4.688, 0.01);
}

TEST(Capacity, FewestWorkersMatchErlangC) {
  // The CPU workers are the M/M/c servers; the GPU takes no time, so one instance does.
  for (const auto& [target, expected] : {std::pair{(mmc_p99(3) + mmc_p99(4)) / 2, 4}, std::pair{(mmc_p99(4) + mmc_p99(5)) / 2, 5}}) {
    CapacityQuery q = query(target);
    q.cpu = exponential_cpu();
    q.gpu = [](const SimRequest&, double, std::mt19937_64&) { return 0.0; };
    const auto plan = plan_capacity(q);
    ASSERT_TRUE(plan.met) << plan.reason;
    EXPECT_EQ(plan.workers, expected) << "target " << target;
    EXPECT_EQ(plan.instances, 1);
    EXPECT_LE(plan.result.latency_s.p99, target);
    // One worker fewer misses it.
    EXPECT_GT(simulate_fleet(q, expected - 1, 1).latency_s.p99, target);
  }
}

TEST(Capacity, FewestGpuInstancesMatchErlangC) {
  // One sequence per instance, exponential D: the instances are the M/M/c servers; E is negligible.
  CapacityQuery q = query((mmc_p99(3) + mmc_p99(4)) / 2);
  q.cpu = [](const SimRequest&, double, std::mt19937_64&) { return 1e-6; };
  q.gpu_slots = 1;
  q.gpu = [](const SimRequest&, double batch, std::mt19937_64& rng) {
    EXPECT_EQ(batch, 1.0);  // one slot per instance: never a batch of two
    return std::exponential_distribution<double>(kMu)(rng);
  };
  q.traffic.requests = 100'000;
  const auto plan = plan_capacity(q);
  ASSERT_TRUE(plan.met) << plan.reason;
  EXPECT_EQ(plan.instances, 4);
  EXPECT_EQ(plan.workers, 1);
}

TEST(Capacity, SaysSoWhenNoFleetWithinTheLimitsMeetsTheTarget) {
  // A target below the service time itself can never be met.
  CapacityQuery q = query(0.5);
  q.traffic.requests = 20'000;
  q.cpu = [](const SimRequest&, double, std::mt19937_64&) { return 1.0; };
  q.gpu = [](const SimRequest&, double, std::mt19937_64&) { return 0.0; };
  q.max_instances = 8;
  q.max_workers = 64;
  const auto plan = plan_capacity(q);
  EXPECT_FALSE(plan.met);
  EXPECT_NE(plan.reason.find("workers"), std::string::npos) << plan.reason;
}

}  // namespace
}  // namespace overhead::cost
