// The sensitivity curves are compute_cost values, the break-evens sit where the curve meets the
// API line, and the GPU table prices every shipped profile with the fewest GPUs that hold the model.
#include <gtest/gtest.h>

#include <filesystem>

#include "cost/sensitivity.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kProfiles = std::filesystem::path(OVERHEAD_DATA_DIR) / "profiles";

// The round roofline of cost_model_test: capacity 0.4 requests/s = 400 output tok/s at full load
// for in = 500, out = 1000; $/1M blended at U = 0.5 is 0.01 / 1500 x 1e6 = 6.667.
CostInputs round_inputs() {
  CostInputs in;
  in.gpu.gpus = 1;
  in.gpu.flops_per_s = 1e15;
  in.gpu.bytes_per_s = 1e12;
  in.gpu.memory_bytes = 100e9;
  in.gpu.weight_bytes = 15.005e9;
  in.gpu.active_parameters = 5e9;
  in.gpu.kv_bytes_per_token = 1e6;
  in.gpu.max_concurrency = 10;
  in.gpu_usd_per_hour = 7.2;
  in.cpu_usd_per_hour = 3.6;
  in.e = {1000, 0, "test"};  // 1 ms of CPU per request
  in.utilization = 0.5;
  return in;
}

const Workload kWork{{500}, {1000}};

ServingOptions tp(int gpus) {
  ServingOptions o;
  o.tp = gpus;
  return o;
}

ApiLine api(double in, double out) {
  Prices none;
  return api_line(std::to_string(in) + "," + std::to_string(out), none, kWork);
}

TEST(Sensitivity, UtilizationCurveIsTheModelsValues) {
  const auto s = sensitivity(round_inputs(), kWork, {}, 10);
  ASSERT_EQ(s.by_utilization.size(), 10u);
  for (const auto& p : s.by_utilization) {
    auto in = round_inputs();
    in.utilization = p.x;
    EXPECT_DOUBLE_EQ(p.usd_per_1m_tokens_blended, compute_cost(in, kWork).usd_per_1m_tokens_blended) << p.x;
  }
  EXPECT_DOUBLE_EQ(s.by_utilization.back().x, 1.0);
  EXPECT_DOUBLE_EQ(s.by_utilization.front().x, 0.1);
  // Hand value at U = 0.5: GPU 0.002 $/s x 2.5 s / 0.5 + CPU 0.001 $/s x 0.001 s, over 1500 tokens.
  EXPECT_NEAR(s.profile_usd_per_1m_tokens_blended, (0.01 + 1e-6) / 1500 * 1e6, 1e-9);
  EXPECT_NEAR(s.profile_output_tokens_per_s, 400, 1e-9);
}

TEST(Sensitivity, DecodeCurveSpansEightfoldEachWayAndFallsWithSpeed) {
  const auto s = sensitivity(round_inputs(), kWork, {}, 7);
  ASSERT_EQ(s.by_decode.size(), 7u);
  // Both FLOP/s and bandwidth scale, so output tokens/s scales with them: 400/8 .. 400x8.
  EXPECT_NEAR(s.by_decode.front().x, 50, 1e-9);
  EXPECT_NEAR(s.by_decode.back().x, 3200, 1e-6);
  EXPECT_NEAR(s.by_decode[3].x, 400, 1e-9);  // the middle point is the profile itself
  EXPECT_DOUBLE_EQ(s.by_decode[3].usd_per_1m_tokens_blended, s.profile_usd_per_1m_tokens_blended);
  for (std::size_t i = 1; i < s.by_decode.size(); ++i)
    EXPECT_LT(s.by_decode[i].usd_per_1m_tokens_blended, s.by_decode[i - 1].usd_per_1m_tokens_blended);
}

TEST(Sensitivity, BreakEvenIsWhereTheCurveMeetsTheApiLine) {
  // A flat API price of $4 per 1M tokens: 0.006 $ per request of 1500 tokens.
  const auto s = sensitivity(round_inputs(), kWork, {api(4, 4)}, 11);
  ASSERT_EQ(s.apis.size(), 1u);
  const auto& a = s.apis[0];
  EXPECT_DOUBLE_EQ(a.usd_per_1m_tokens_blended, 4);
  // 0.005 / U + 1e-6 = 0.006  ->  U = 0.005 / 0.005999.
  ASSERT_TRUE(a.break_even_utilization);
  EXPECT_NEAR(*a.break_even_utilization, 0.005 / 0.005999, 1e-9);
  auto at = round_inputs();
  at.utilization = *a.break_even_utilization;
  EXPECT_NEAR(compute_cost(at, kWork).usd_per_1m_tokens_blended, 4, 1e-9);
  // At U = 0.5 the GPU side must fall from 0.01 to 0.005999 $: speed x 0.01/0.005999 -> 400 x that tok/s.
  ASSERT_TRUE(a.break_even_output_tokens_per_s);
  EXPECT_NEAR(*a.break_even_output_tokens_per_s, 400 * 0.01 / 0.005999, 1e-6);
}

TEST(Sensitivity, NoBreakEvenWhenTheApiIsCheaperThanTheCpuAlone) {
  // $0.0001 per 1M tokens is less than the CPU side alone (1e-6 $ per 1500 tokens = 0.00067 per 1M).
  const auto s = sensitivity(round_inputs(), kWork, {api(0.0001, 0.0001)}, 5);
  EXPECT_FALSE(s.apis[0].break_even_utilization);
  EXPECT_FALSE(s.apis[0].break_even_output_tokens_per_s);
}

TEST(Sensitivity, ApiLineBlendsOverTheMixAndReadsPresets) {
  const auto a = api(1, 4);  // (500 x 1 + 1000 x 4) / 1500 = 3
  EXPECT_DOUBLE_EQ(a.usd_per_1m_tokens_blended, 3);
  const auto prices = load_prices(kProfiles / "price" / "prices.json");
  const auto preset = api_line("llama-3.3-70b", prices, kWork);
  EXPECT_DOUBLE_EQ(preset.usd_per_1m_in, prices.apis.at("llama-3.3-70b").usd_per_1m_input);
  EXPECT_THROW(api_line("no-such-api", prices, kWork), CostError);
}

TEST(Sensitivity, GpuTableUsesTheFewestGpusThatHoldTheModel) {
  const auto prices = load_prices(kProfiles / "price" / "prices.json");
  const auto model = load_model("llama-3.3-70b", kProfiles);
  auto base = round_inputs();
  const Workload w{{200}, {400}};
  const auto rows = gpu_table(kProfiles, model, base, w, prices);
  ASSERT_EQ(rows.size(), list_profiles(kProfiles, "gpu").size());
  for (const auto& row : rows) {
    ASSERT_TRUE(row.cost) << row.gpu << ": " << row.error;
    const auto gpu = load_gpu(row.gpu, kProfiles);
    // The row's GPU count holds the weights and half as many would not.
    EXPECT_NO_THROW(concurrency_limit(make_roofline(gpu, model, tp(row.gpus)), 600)) << row.gpu;
    if (row.gpus > 1) {
      EXPECT_THROW(concurrency_limit(make_roofline(gpu, model, tp(row.gpus / 2)), 600), CostError) << row.gpu;
    }
    CostInputs in = base;
    in.gpu = make_roofline(gpu, model, tp(row.gpus));
    in.gpu_usd_per_hour = prices.instances.at(row.gpu).usd_per_hour;
    EXPECT_DOUBLE_EQ(row.cost->usd_per_1m_tokens_blended, compute_cost(in, w).usd_per_1m_tokens_blended) << row.gpu;
  }
  // 141 GB of BF16 weights: two 80 GB H100s, one 180 GB B200, eight 24 GB A10Gs.
  auto find = [&](const std::string& n) {
    for (const auto& r : rows)
      if (r.gpu == n) return r.gpus;
    return -1;
  };
  EXPECT_EQ(find("h100-sxm"), 2);
  EXPECT_EQ(find("a10g"), 8);
}

}  // namespace
}  // namespace overhead::cost
