// The capacity simulator against queueing theory: M/M/1 and M/D/1 waits, Little's law, saturation
// detection, batch accounting and determinism under a seed.
#include "cost/simulator.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace overhead::cost {
namespace {

ServiceTime exponential(double rate) {
  return [rate](const SimRequest&, double, std::mt19937_64& rng) { return std::exponential_distribution<double>(rate)(rng); };
}
ServiceTime fixed(double seconds) {
  return [seconds](const SimRequest&, double, std::mt19937_64&) { return seconds; };
}

SimConfig one_stage(double lambda, ServiceTime service, std::size_t requests, int servers = 1) {
  SimConfig c;
  c.arrival_rate = lambda;
  c.requests = requests;
  c.seed = 42;
  c.workload = {{200, 400}};
  c.stages = {{"cpu", servers, std::move(service)}};
  return c;
}

TEST(Simulator, MM1MeanWaitMatchesTheory) {
  const double lambda = 0.7, mu = 1.0, rho = lambda / mu;
  const auto r = simulate(one_stage(lambda, exponential(mu), 1'000'000));
  const double wq = rho / (mu - lambda);  // 2.333 s
  EXPECT_NEAR(r.stages[0].wait_s.mean, wq, 0.05 * wq);
  EXPECT_NEAR(r.latency_s.mean, 1 / (mu - lambda), 0.05 / (mu - lambda));
  EXPECT_NEAR(r.stages[0].utilization, rho, 0.01);
  // Sojourn time in M/M/1 is exponential with rate mu - lambda: p99 = ln(100) / (mu - lambda).
  EXPECT_NEAR(r.latency_s.p99, std::log(100.0) / (mu - lambda), 0.05 * std::log(100.0) / (mu - lambda));
  EXPECT_TRUE(r.saturated_stage.empty());
}

TEST(Simulator, MD1MeanWaitMatchesPollaczekKhinchine) {
  const double lambda = 0.6, d = 1.0, rho = lambda * d;
  const auto r = simulate(one_stage(lambda, fixed(d), 500'000));
  const double wq = rho * d / (2 * (1 - rho));  // 0.75 s
  EXPECT_NEAR(r.stages[0].wait_s.mean, wq, 0.05 * wq);
  EXPECT_DOUBLE_EQ(r.stages[0].service_s.p99, d);
}

TEST(Simulator, MMcWithManyServersRarelyWaits) {
  // 4 servers at rho = 0.5 each (M/M/4): Erlang C gives P(wait) = 0.1739, Wq = P(wait) / (c mu - lambda).
  const double lambda = 2.0, mu = 1.0;
  const auto r = simulate(one_stage(lambda, exponential(mu), 500'000, 4));
  const double wq = 0.173913 / (4 * mu - lambda);
  EXPECT_NEAR(r.stages[0].wait_s.mean, wq, 0.06 * wq);
  EXPECT_NEAR(r.stages[0].utilization, 0.5, 0.01);
}

TEST(Simulator, LittlesLawHoldsAcrossTwoStages) {
  SimConfig c = one_stage(3.0, exponential(5.0), 400'000);
  // A GPU stage whose per-request time grows with the running batch, as in continuous batching.
  c.stages.push_back({"gpu", 8, [](const SimRequest& q, double batch, std::mt19937_64&) {
                        return 0.5 + 0.0001 * q.output_tokens * batch;  // well under capacity
                      }});
  const auto r = simulate(c);
  // L = lambda W, with L integrated from arrival and departure events and lambda the configured rate.
  EXPECT_NEAR(r.mean_in_system, c.arrival_rate * r.latency_s.mean, 0.03 * r.mean_in_system);
  // And per queue: Lq = lambda Wq.
  for (const auto& s : r.stages)
    EXPECT_NEAR(s.mean_queue_length, c.arrival_rate * s.wait_s.mean, 0.03 * s.mean_queue_length + 1e-3) << s.name;
  EXPECT_NEAR(r.throughput_per_s, c.arrival_rate, 0.02 * c.arrival_rate);
  EXPECT_LE(r.stages[1].mean_batch, 8.0);
  EXPECT_GE(r.stages[1].mean_batch, 1.0);
}

TEST(Simulator, BatchNeverExceedsTheServers) {
  SimConfig c = one_stage(50.0, exponential(100.0), 50'000);
  double largest = 0;
  c.stages.push_back({"gpu", 16, [&largest](const SimRequest&, double batch, std::mt19937_64&) {
                        largest = std::max(largest, batch);
                        return 0.1 + 0.01 * batch;
                      }});
  const auto r = simulate(c);
  EXPECT_LE(largest, 16.0);
  EXPECT_GT(largest, 1.0);  // 50/s into slots of ~0.2 s: several run at once
  EXPECT_TRUE(r.saturated_stage.empty());
}

TEST(Simulator, DetectsTheSaturatedStage) {
  // CPU capacity 1/s against 1.5/s offered: the CPU stage saturates, and the queue grows.
  auto r = simulate(one_stage(1.5, exponential(1.0), 100'000));
  EXPECT_EQ(r.saturated_stage, "cpu");
  EXPECT_TRUE(r.stages[0].saturated);
  EXPECT_GT(r.stages[0].offered_load, 1.4);
  EXPECT_NEAR(r.throughput_per_s, 1.0, 0.02);
  EXPECT_GT(r.stages[0].max_queue_length, 10'000u);

  // Fast CPU, slow GPU (2 slots of 1 s = 2/s against 3/s): the GPU stage saturates, the CPU does not.
  SimConfig c = one_stage(3.0, exponential(20.0), 100'000);
  c.stages.push_back({"gpu", 2, fixed(1.0)});
  r = simulate(c);
  EXPECT_EQ(r.saturated_stage, "gpu");
  EXPECT_EQ(r.bottleneck_stage, "gpu");
  EXPECT_FALSE(r.stages[0].saturated);
  EXPECT_NEAR(r.stages[1].utilization, 1.0, 0.01);

  // Below capacity nothing saturates, but the bottleneck is still named.
  c.arrival_rate = 1.0;
  r = simulate(c);
  EXPECT_TRUE(r.saturated_stage.empty());
  EXPECT_EQ(r.bottleneck_stage, "gpu");
}

TEST(Simulator, SameSeedSameResultOtherSeedDiffers) {
  auto c = one_stage(0.8, exponential(1.0), 20'000);
  const auto a = simulate(c);
  const auto b = simulate(c);
  EXPECT_EQ(a.latency_s.mean, b.latency_s.mean);
  EXPECT_EQ(a.latency_s.p99, b.latency_s.p99);
  EXPECT_EQ(a.span_s, b.span_s);
  c.seed = 43;
  const auto other = simulate(c);
  EXPECT_NE(a.latency_s.mean, other.latency_s.mean);
}

TEST(Simulator, RejectsConfigsThatCannotRun) {
  auto c = one_stage(1.0, exponential(1.0), 10);
  c.arrival_rate = 0;
  EXPECT_THROW(simulate(c), CostError);
  c = one_stage(1.0, exponential(1.0), 10, 0);
  EXPECT_THROW(simulate(c), CostError);
  c = one_stage(1.0, fixed(-1.0), 10);
  EXPECT_THROW(simulate(c), CostError);
  c.stages.clear();
  EXPECT_THROW(simulate(c), CostError);
}

}  // namespace
}  // namespace overhead::cost
