// The closed-batch simulator against cases worked out by hand: batch turnover in line (prefetch
// off), hidden (prefetch on) and exposed again when the receive is slower than a batch, two
// workers sharing the queue, and the empirical spread's bins and scaling.
#include "cost/closed_batch.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace overhead::cost {
namespace {

// E = 100 us + 1 us/token, alpha2 = 50 us; every item has 10 tokens: 110 us, 160 us on a turnover.
const std::vector<EBatch> kFits = {{100, 50, 1, "by hand"}};

std::vector<ClosedBatchItem> items(std::size_t n) { return std::vector<ClosedBatchItem>(n, {10, 0}); }

TEST(ClosedBatch, PrefetchOffPaysTheTurnoverInLine) {
  ClosedBatchConfig c;
  c.prefetch = false;
  const auto r = simulate_closed_batch(items(25), kFits, c);
  // Batches of 10, 10, 5: items 10, 20 and 25 carry the receive/delete (the last one its final
  // delete and empty receive): 25 x 110 + 3 x 50 = 2900 us.
  EXPECT_DOUBLE_EQ(r.total_s, 2900e-6);
  EXPECT_EQ(r.batches, 3u);
  EXPECT_DOUBLE_EQ(r.cycles_us[0], 110);
  EXPECT_DOUBLE_EQ(r.cycles_us[9], 160);
  EXPECT_DOUBLE_EQ(r.cycles_us[24], 160);
  EXPECT_DOUBLE_EQ(r.cycle_us.p50, 110);
  // Batch 5 doubles the turnovers: 25 x 110 + 5 x 50.
  c.batch = 5;
  EXPECT_DOUBLE_EQ(simulate_closed_batch(items(25), kFits, c).total_s, 3000e-6);
}

TEST(ClosedBatch, TwoWorkersTakeBatchesInTurn) {
  ClosedBatchConfig c;
  c.prefetch = false;
  c.workers = 2;
  const auto r = simulate_closed_batch(items(40), kFits, c);
  // Each worker takes two batches of 10: 20 x 110 + 2 x 50 = 2300 us, side by side.
  EXPECT_DOUBLE_EQ(r.total_s, 2300e-6);
  ASSERT_EQ(r.items_per_worker.size(), 2u);
  EXPECT_EQ(r.items_per_worker[0], 20u);
  EXPECT_EQ(r.items_per_worker[1], 20u);
}

TEST(ClosedBatch, PrefetchHidesAFastRoundTrip) {
  ClosedBatchConfig c;
  c.prefetch = true;
  const auto r = simulate_closed_batch(items(25), kFits, c);
  // The second thread receives (25 us) and deletes (25 us) while items run back to back; only the
  // last batch's delete shows: 25 x 110 + 25 = 2775 us.
  EXPECT_DOUBLE_EQ(r.total_s, 2775e-6);
  EXPECT_DOUBLE_EQ(r.cycles_us[9], 110);
  EXPECT_DOUBLE_EQ(r.cycles_us[24], 135);
}

TEST(ClosedBatch, PrefetchShowsAReceiveSlowerThanABatch) {
  // alpha2 = 5000 us: receive 2500, delete 2500. Four receives are asked for at once and come in
  // at 0, 2500, 5000 (the fourth finds the queue empty). Batch 0 runs 0..1100, batch 1 waits for
  // 2500 and runs to 3600, batch 2 (5 items) 5000..5550, then its delete: 8050 us.
  const std::vector<EBatch> slow = {{100, 5000, 1, "by hand"}};
  ClosedBatchConfig c;
  const auto r = simulate_closed_batch(items(25), slow, c);
  EXPECT_DOUBLE_EQ(r.total_s, 8050e-6);
  EXPECT_DOUBLE_EQ(r.cycles_us[9], 2500 - 990);  // item 9 waits for batch 1
  EXPECT_DOUBLE_EQ(r.cycles_us[19], 5000 - 3490);
}

TEST(ClosedBatch, SpreadKeepsTheMeanAndDrawsFromTheItemsBin) {
  // Small items (fitted 100) measured at 50 or 150; large ones (fitted 1000) at 500 or 3500.
  std::vector<std::pair<double, double>> pairs;
  for (int i = 0; i < 100; ++i) pairs.emplace_back(100, i % 2 ? 50 : 150);
  for (int i = 0; i < 100; ++i) pairs.emplace_back(1000, i % 2 ? 500 : 3500);
  const auto s = make_spread(pairs, 10, 50);
  ASSERT_EQ(s.ratios.size(), 2u);  // equal fitted values never straddle two bins
  std::mt19937_64 rng(7);
  for (int k = 0; k < 50; ++k) {
    const double small = s.draw(100, rng), large = s.draw(1000, rng);
    EXPECT_TRUE(small == 0.5 || small == 1.5) << small;
    // Large bin ratios 0.5 and 3.5, scaled to mean 1: 0.25 and 1.75.
    EXPECT_TRUE(large == 0.25 || large == 1.75) << large;
  }
  // Through the simulator, 1 worker, prefetch off: the mean cycle stays at the fit.
  ClosedBatchConfig c;
  c.prefetch = false;
  c.spread = make_spread(std::vector<std::pair<double, double>>(pairs.begin(), pairs.begin() + 100), 1, 1);
  const auto r = simulate_closed_batch(items(20000), kFits, c);
  EXPECT_NEAR(r.cycle_us.mean, 110 + 50.0 / 10, 2.0);
  std::size_t short_ones = 0;  // a ratio of 0.5: 55 us, or 80 us on a turnover
  for (double cycle : r.cycles_us) short_ones += cycle < 100 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(short_ones) / 20000, 0.5, 0.02);
}

TEST(ClosedBatch, RejectsWhatCannotRun) {
  ClosedBatchConfig c;
  EXPECT_THROW(simulate_closed_batch({}, kFits, c), CostError);
  EXPECT_THROW(simulate_closed_batch({{10, 3}}, kFits, c), CostError);
  c.workers = 0;
  EXPECT_THROW(simulate_closed_batch(items(3), kFits, c), CostError);
  c.workers = 1;
  c.cpu.cores = -1;
  EXPECT_THROW(simulate_closed_batch(items(3), kFits, c), CostError);
  c.cpu.cores = 2;
  c.cpu.other_per_item = std::nan("");
  EXPECT_THROW(simulate_closed_batch(items(3), kFits, c), CostError);
}

TEST(ClosedBatch, WorkersShareTheCoresWithTheOtherThreads) {
  // Two workers, the other threads needing half a worker's CPU per item: 2 x 1.5 = 3 cores wanted
  // of 2, so every thread runs 1.5 times slower than alone; the fit came from one worker, which
  // wanted 1.5 of 2 and was not slowed. The run of TwoWorkersTakeBatchesInTurn (2300 us) takes
  // 1.5 x 2300 = 3450 us.
  ClosedBatchConfig c;
  c.prefetch = false;
  c.workers = 2;
  c.cpu = {2, 0.5, 1};
  const auto r = simulate_closed_batch(items(40), kFits, c);
  EXPECT_DOUBLE_EQ(r.cpu_stretch, 1.5);
  EXPECT_NEAR(r.total_s, 3450e-6, 1e-12);
  EXPECT_DOUBLE_EQ(r.cycles_us[0], 165);
  // Four cores: 3 wanted, nobody waits.
  c.cpu.cores = 4;
  EXPECT_DOUBLE_EQ(simulate_closed_batch(items(40), kFits, c).total_s, 2300e-6);
  // A fit made with two workers on one core already ran 3 times slower; one worker on that core
  // wants 1.5 and runs at 1.5 / 3 of the fit's E.
  c.cpu = {1, 0.5, 2};
  c.workers = 1;
  EXPECT_DOUBLE_EQ(simulate_closed_batch(items(10), kFits, c).cycles_us[0], 110 * 1.5 / 3);
}

}  // namespace
}  // namespace overhead::cost
