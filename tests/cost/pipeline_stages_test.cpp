// The open simulator's replayed arrivals and the pipeline around its workers (the input queue's
// batch receive, the publisher pool with its backpressure, the consumer), each on a case small
// enough to work out by hand (the timelines are in the comments), plus two checks against
// theory and the plain FIFO stage.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cost/simulator.hpp"

namespace overhead::cost {
namespace {

ServiceTime fixed(double seconds) {
  return [seconds](const SimRequest&, double, std::mt19937_64&) { return seconds; };
}
ServiceTime exponential(double rate) {
  return [rate](const SimRequest&, double, std::mt19937_64& rng) { return std::exponential_distribution<double>(rate)(rng); };
}

SimConfig replayed(std::vector<double> times, double e, int workers = 1) {
  SimConfig c;
  c.arrivals = Arrivals::replay;
  c.arrival_times = std::move(times);
  c.workload = {{200, 400}};
  c.stages = {{"cpu", workers, fixed(e)}};
  return c;
}

TEST(ReplayedArrivals, DeterministicServiceGivesTheWaitsByHand) {
  // Arrivals 0, 0, 0, 5 into one worker of 2 s: E runs 0-2, 2-4, 4-6, 6-8; waits 0, 2, 4, 1.
  const auto r = simulate(replayed({0, 0, 0, 5}, 2.0));
  EXPECT_EQ(r.requests, 4u);
  EXPECT_DOUBLE_EQ(r.stages[0].wait_s.mean, 7.0 / 4);
  EXPECT_DOUBLE_EQ(r.latency_s.mean, (2 + 4 + 6 + 3) / 4.0);
  EXPECT_DOUBLE_EQ(r.span_s, 8.0);
  EXPECT_DOUBLE_EQ(r.arrival_rate, 3.0 / 5);  // 3 gaps over 5 s
  EXPECT_DOUBLE_EQ(r.stages[0].utilization, 1.0);
}

TEST(ReplayedArrivals, RequestsKeepTheirOrderAndTokens) {
  SimConfig c = replayed({0, 1, 1.5, 10}, 0);
  c.workload = {{100, 1}, {200, 2}, {300, 3}, {400, 4}};
  std::vector<double> seen;
  c.stages = {{"cpu", 1, [&seen](const SimRequest& q, double, std::mt19937_64&) {
                 seen.push_back(q.input_tokens);
                 return q.output_tokens;  // 1, 2, 3, 4 s
               }}};
  const auto r = simulate(c);
  EXPECT_EQ(seen, (std::vector<double>{100, 200, 300, 400}));
  // E runs 0-1, 1-3, 3-6, 10-14: waits 0, 0, 1.5, 0.
  EXPECT_DOUBLE_EQ(r.stages[0].wait_s.mean, 1.5 / 4);
  EXPECT_DOUBLE_EQ(r.span_s, 14.0);
}

TEST(ReplayedArrivals, AllAtOnceIsAFiniteBatchNotAnInfiniteRate) {
  // A run that enqueued everything up front: the rate into the workers is the run's own.
  const auto r = simulate(replayed(std::vector<double>(10, 0.0), 1.0, 2));
  EXPECT_DOUBLE_EQ(r.span_s, 5.0);
  EXPECT_DOUBLE_EQ(r.arrival_rate, 0.0);
  EXPECT_DOUBLE_EQ(r.stages[0].offered_load, 1.0);  // 2/s x 1 s / 2 workers
  EXPECT_TRUE(std::isfinite(r.stages[0].offered_load));
}

TEST(ReplayedArrivals, RefusesUnsortedOrNegativeTimes) {
  EXPECT_THROW(simulate(replayed({0, 2, 1}, 1.0)), CostError);
  EXPECT_THROW(simulate(replayed({-1, 2}, 1.0)), CostError);
  EXPECT_THROW(simulate(replayed({}, 1.0)), CostError);
}

TEST(InputQueue, BatchReceiveWithRoundTripsInLine) {
  // Five requests at 0, one worker, E = 1 s, batches of 2, receive 0.5 s, delete 0.25 s, no prefetch:
  //   receive 0-0.5 -> E 0.5-1.5, 1.5-2.5; delete -2.75; receive -3.25 -> E 3.25-4.25, 4.25-5.25;
  //   delete -5.5; receive -6 -> E 6-7.
  SimConfig c = replayed(std::vector<double>(5, 0.0), 1.0);
  c.input = {2, 0.5, 0.25, false};
  const auto r = simulate(c);
  EXPECT_DOUBLE_EQ(r.stages[0].wait_s.mean, (0.5 + 1.5 + 3.25 + 4.25 + 6) / 5);
  EXPECT_DOUBLE_EQ(r.span_s, 7.0);
  EXPECT_EQ(r.stages[0].rounds, 3u);
  EXPECT_DOUBLE_EQ(r.stages[0].mean_round_size, 5.0 / 3);
  EXPECT_DOUBLE_EQ(r.stages[0].io_share, (3 * 0.5 + 3 * 0.25) / 7.0);  // the last delete included
}

TEST(InputQueue, PrefetchHidesTheRoundTripsBehindTheBatchInHand) {
  // The same with prefetch: receives at 0 (in hand 0.5) and 0.5 (in hand 1); the third once the
  // first batch is done at 2.5 (in hand 3). E runs back to back from 0.5: ends at 5.5.
  SimConfig c = replayed(std::vector<double>(5, 0.0), 1.0);
  c.input = {2, 0.5, 0.25, true};
  const auto r = simulate(c);
  EXPECT_DOUBLE_EQ(r.stages[0].wait_s.mean, (0.5 + 1.5 + 2.5 + 3.5 + 4.5) / 5);
  EXPECT_DOUBLE_EQ(r.span_s, 5.5);
  EXPECT_EQ(r.stages[0].rounds, 3u);
  EXPECT_DOUBLE_EQ(r.stages[0].io_share, 0.0);  // the second thread's
}

TEST(InputQueue, AReceiveTakesOnlyWhatHasArrived) {
  // Arrivals 0, 1, 1, 1; batches of 10, no round trips but a 0.1 s receive: the first receive
  // (answered at 0) holds one request; the second, asked at 0.1 + 0.5 = 0.6, waits for 1 and
  // holds the other three.
  SimConfig c = replayed({0, 1, 1, 1}, 0.5);
  c.input = {10, 0.1, 0, false};
  const auto r = simulate(c);
  EXPECT_EQ(r.stages[0].rounds, 2u);
  // E starts at 0.1, then 1.1, 1.6, 2.1.
  EXPECT_DOUBLE_EQ(r.stages[0].wait_s.mean, (0.1 + 0.1 + 0.6 + 1.1) / 4);
}

TEST(PublisherPool, AFullPoolBlocksTheWorkerByTheExactAmount) {
  // Four requests at 0, one worker of 1 s, one publisher of 3 s, at most one record waiting.
  //   record 0: handed off at 1, published 1-4;  record 1: handed off at 2, waits, published 4-7;
  //   record 2: E ends at 3 with record 1 waiting: the worker is blocked until 4 (record 1 taken),
  //             published 7-10;  record 3: E 4-5, blocked until 7, published 10-13.
  SimConfig c = replayed({0, 0, 0, 0}, 1.0);
  c.publish = {1, 1, fixed(3.0)};
  const auto r = simulate(c);
  ASSERT_EQ(r.stages.size(), 2u);
  const auto& cpu = r.stages[0];
  const auto& pub = r.stages[1];
  EXPECT_EQ(pub.name, "publish");
  EXPECT_FALSE(pub.request_path);
  EXPECT_DOUBLE_EQ(cpu.blocked_s.mean, (0 + 0 + 1 + 2) / 4.0);
  EXPECT_DOUBLE_EQ(cpu.wait_s.mean, (0 + 1 + 2 + 4) / 4.0);  // E starts 0, 1, 2, 4
  EXPECT_DOUBLE_EQ(r.span_s, 13.0);
  EXPECT_DOUBLE_EQ(cpu.blocked_share, 3.0 / 13);
  EXPECT_DOUBLE_EQ(cpu.utilization, 4.0 / 13);
  EXPECT_DOUBLE_EQ(pub.wait_s.mean, (0 + 2 + 3 + 3) / 4.0);
  EXPECT_DOUBLE_EQ(pub.utilization, 12.0 / 13);
  EXPECT_EQ(pub.max_queue_length, 1u);  // never more than the capacity waits
  // The requests themselves left the worker when E ended: latency 1, 2, 3, 5.
  EXPECT_DOUBLE_EQ(r.latency_s.mean, 11.0 / 4);

  // With room for every record nothing blocks: E runs back to back.
  c.publish.capacity = 100;
  const auto roomy = simulate(c);
  EXPECT_DOUBLE_EQ(roomy.stages[0].blocked_s.p99, 0.0);
  EXPECT_DOUBLE_EQ(roomy.stages[0].wait_s.mean, 1.5);
}

TEST(PublisherPool, WaitsMatchMD1WhenItNeverBlocks) {
  // Poisson at 0.6/s, E = 0, one publisher of 1 s and room for all: the pool is an M/D/1 queue,
  // Wq = rho d / (2 (1 - rho)) = 0.75 s, and Little's law holds on its queue.
  SimConfig c;
  c.arrival_rate = 0.6;
  c.requests = 400'000;
  c.seed = 3;
  c.workload = {{200, 400}};
  c.stages = {{"cpu", 1, fixed(0)}};
  c.publish = {1, 1'000'000, fixed(1.0)};
  const auto r = simulate(c);
  const auto& pub = r.stages[1];
  EXPECT_NEAR(pub.wait_s.mean, 0.75, 0.05 * 0.75);
  EXPECT_NEAR(pub.utilization, 0.6, 0.01);
  EXPECT_NEAR(pub.mean_queue_length, 0.6 * pub.wait_s.mean, 0.03 * pub.mean_queue_length);
  EXPECT_DOUBLE_EQ(r.stages[0].blocked_share, 0.0);
}

TEST(PublisherPool, TheEventLoopEqualsThePlainFifoStageWhenNothingBlocks) {
  // Three workers with exponential E under Poisson arrivals: with a pool that publishes at once
  // and never fills, the workers' event loop draws E in the same order and must give the FIFO
  // stage's figures exactly.
  SimConfig c;
  c.arrival_rate = 2.5;
  c.requests = 50'000;
  c.seed = 11;
  c.workload = {{200, 400}};
  c.stages = {{"cpu", 3, exponential(1.0)}, {"gpu", 4, fixed(1.0)}};
  const auto plain = simulate(c);
  c.publish = {1, 1'000'000, fixed(0)};
  const auto looped = simulate(c);
  EXPECT_DOUBLE_EQ(looped.stages[0].wait_s.mean, plain.stages[0].wait_s.mean);
  EXPECT_DOUBLE_EQ(looped.stages[0].wait_s.p99, plain.stages[0].wait_s.p99);
  EXPECT_DOUBLE_EQ(looped.latency_s.p99, plain.latency_s.p99);
  EXPECT_DOUBLE_EQ(looped.stages[1].wait_s.mean, plain.stages[1].wait_s.mean);
  EXPECT_NEAR(looped.stages[0].mean_batch, plain.stages[0].mean_batch, 1e-9);
}

TEST(Consumer, RoundsLingerFillAndWriteByHand) {
  // Records reach the log queue at 0, 0.1, 0.2 and 5 (E and publish take no time). One consumer,
  // writes of up to 2 records after 1 s of linger, 0.5 s + 0.1 s per record:
  //   round 1 opens at 0, is full at 0.1, writes 0.1-0.8;  round 2 opens at 0.8 with record 2,
  //   lingers to 1.8, writes 1.8-2.4;  round 3 opens at 5, lingers to 6, writes 6-6.6.
  SimConfig c = replayed({0, 0.1, 0.2, 5}, 0, 4);
  c.publish = {4, 0, fixed(0)};
  c.consumer = {1, 2, 1.0, 0.5, 0.1};
  const auto r = simulate(c);
  ASSERT_EQ(r.stages.size(), 3u);
  const auto& con = r.stages[2];
  EXPECT_EQ(con.name, "consumer");
  EXPECT_EQ(con.rounds, 3u);
  EXPECT_DOUBLE_EQ(con.wait_s.mean, (0.1 + 0 + 1.6 + 1.0) / 4);
  EXPECT_DOUBLE_EQ(r.stored_latency_s.mean, (0.8 + 0.7 + 2.2 + 1.6) / 4);
  EXPECT_DOUBLE_EQ(r.span_s, 6.6);
  EXPECT_DOUBLE_EQ(con.utilization, (0.7 + 0.6 + 0.6) / 6.6);
}

TEST(Consumer, NeedsThePublishStage) {
  SimConfig c = replayed({0, 1}, 0.1);
  c.consumer = {1, 10, 0, 0.1, 0};
  EXPECT_THROW(simulate(c), CostError);
}

}  // namespace
}  // namespace overhead::cost
