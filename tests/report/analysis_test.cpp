#include "report/analysis.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "stats/errors.hpp"
#include "support/record_generator.hpp"

namespace overhead::report {
namespace {

Analysis run(const testing::GeneratorOptions& o, bool seed = false) {
  AnalysisOptions ao;
  ao.compare_seed = seed;
  return analyze(build_item_table(testing::generate_records(o)), ao);
}

TEST(Analysis, RecoversTheCostModelAndTheBatchHump) {
  testing::GeneratorOptions o;
  o.items_per_tokenizer = 3000;
  const Analysis a = run(o, true);
  ASSERT_EQ(a.cases, std::vector<int>{5});
  const FitEntry* b = a.find_fit(5, "phi-4", "cycle", "b", "ols");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->ols) << b->error;
  // Cost = 40 + 0.05 tokens + Exp(mean 5) noise, + 900 at a turnover.
  EXPECT_NEAR(b->ols->coefficients[0].estimate, 45, 1.0);
  EXPECT_NEAR(b->ols->coefficients[1].estimate, 900, 2.0);
  EXPECT_NEAR(b->ols->coefficients[2].estimate, 0.05, 0.003);
  const FitEntry* robust = a.find_fit(5, kAllTokenizers, "cycle", "b", "huber");
  ASSERT_NE(robust, nullptr);
  ASSERT_TRUE(robust->robust);
  // Service time leaves the round trip out.
  const FitEntry* service = a.find_fit(5, kAllTokenizers, "service", "a", "ols");
  ASSERT_TRUE(service && service->ols);
  EXPECT_LT(service->ols->coefficients[0].estimate, 60);
  // The upper mode is the turnover items: one in ten.
  ASSERT_EQ(a.histograms.size(), 1u);
  const auto& h = a.histograms[0];
  ASSERT_TRUE(h.modes.fitted);
  EXPECT_NEAR(h.modes.upper_share, h.turnover_share, 0.002);
  EXPECT_NEAR(h.turnover_share, 0.1, 0.001);
  EXPECT_GT(h.upper_turnover_share, 0.99);
  // Token rows: per tokenizer and all; api_input present.
  ASSERT_EQ(a.token_rows.size(), 4u);
  EXPECT_EQ(a.token_rows.back().tokenizer, "all");
  EXPECT_EQ(a.token_rows.back().tokens.n, 9000u);  // 3000 prompts, each once per tokenizer (the seed: 11,456 x 3)
  ASSERT_TRUE(a.token_rows[0].api_input);
  // Case table with the seed beside it.
  ASSERT_EQ(a.case_rows.size(), 1u);
  ASSERT_TRUE(a.case_rows[0].seed_total_s);
  EXPECT_DOUBLE_EQ(*a.case_rows[0].seed_total_s, 98.887);
  double share = 0;
  for (double s : a.case_rows[0].stage_share) share += s;
  EXPECT_NEAR(share, 1.0, 1e-9);
  // OLS with an intercept reproduces the measured sum; the robust fit does not have to.
  EXPECT_NEAR(a.predictions[0].ols_a_us, a.predictions[0].measured_cycle_sum_us, 1e-6 * a.predictions[0].measured_cycle_sum_us);
}

TEST(Analysis, NoTurnoverGivesAClearReasonForModelB) {
  testing::GeneratorOptions o;
  o.items_per_tokenizer = 50;
  o.batch = 1000;  // one batch per worker: no turnover anywhere
  const Analysis a = run(o);
  const FitEntry* b = a.find_fit(5, "phi-4", "cycle", "b", "ols");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->ols);
  EXPECT_NE(b->error.find("no batch turnover"), std::string::npos) << b->error;
  EXPECT_TRUE(a.find_fit(5, "phi-4", "cycle", "a", "ols")->ols);
}

TEST(Analysis, TooFewItemsAndConstantTokensAreReportedPerFit) {
  testing::GeneratorOptions o;
  o.items_per_tokenizer = 2;
  o.tokenizers = {"only"};
  const Analysis a = run(o);
  const FitEntry* f = a.find_fit(5, "only", "cycle", "a", "ols");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->error.find("too few observations: 2"), std::string::npos) << f->error;

  auto records = testing::generate_records(testing::GeneratorOptions{});
  for (auto& r : records) r.token_count = 100;
  const Analysis c = analyze(build_item_table(records), {});
  const FitEntry* g = c.find_fit(5, "phi-4", "cycle", "a", "ols");
  EXPECT_NE(g->error.find("'tokens' is constant (every value is 100)"), std::string::npos) << g->error;
}

TEST(Analysis, SeveralCasesOneWorker) {
  testing::GeneratorOptions o;
  o.cases = {1, 2, 3, 4, 5};
  o.items_per_tokenizer = 200;
  const Analysis a = run(o);
  EXPECT_EQ(a.case_rows.size(), 5u);
  EXPECT_EQ(a.histograms.size(), 5u);
  EXPECT_EQ(a.scatter.size(), 5u);
  // 5 cases x (3 tokenizers + pooled) x (cycle: ols+huber, service: ols) x 2 models
  EXPECT_EQ(a.fits.size(), 5u * 4u * 3u * 2u);
  EXPECT_EQ(a.token_rows.back().tokens.n, 600u);  // five cases of the same prompts count once
}

TEST(Analysis, RecordsWithoutStampsStillGiveTokenStatistics) {
  auto records = testing::generate_records(testing::GeneratorOptions{});
  for (auto& r : records) r.received = 0;
  const Analysis a = analyze(build_item_table(records), {});
  EXPECT_EQ(a.timed_items, 0u);
  EXPECT_FALSE(a.token_rows.empty());
  EXPECT_FALSE(a.warnings.empty());
  EXPECT_THROW(analyze(build_item_table({}), {}), stats::StatsError);
}

}  // namespace
}  // namespace overhead::report
