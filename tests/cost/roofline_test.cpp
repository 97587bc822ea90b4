// The roofline D(y|x) against a worked example computed by hand: an 8B dense model in BF16 on a
// made-up 80 GB GPU, plus the refusal of a 70B BF16 model on one 80 GB GPU.
#include <gtest/gtest.h>

#include <string>

#include "cost/roofline.hpp"

namespace overhead::cost {
namespace {

Figure fig(double value) { return {value, "estimated", "worked example", "2025-06"}; }

// 80 GB, 2000 GB/s at 80% = 1.6e12 B/s, 1000 TFLOP/s at 50% = 5e14 FLOP/s.
GpuProfile example_gpu() {
  GpuProfile g;
  g.name = "example";
  g.memory_gb = fig(80);
  g.bandwidth_gb_per_s = fig(2000);
  g.peak_tflops = fig(1000);
  g.compute_efficiency = fig(0.5);
  g.bandwidth_efficiency = fig(0.8);
  return g;
}

// 8e9 parameters x 2 bytes = 16e9 bytes of weights; KV 2 x 32 layers x 8 heads x 128 x 2 B = 131072 B/token.
ModelProfile example_8b() {
  ModelProfile m;
  m.name = "example-8b";
  m.parameters = fig(8e9);
  m.active_parameters = fig(8e9);
  m.bytes_per_parameter = fig(2);
  m.kv_bytes_per_token = fig(131072);
  m.max_concurrency = fig(256);
  return m;
}

TEST(Roofline, AchievedRatesAreScaledByEfficiencyAndGpus) {
  const auto one = make_roofline(example_gpu(), example_8b(), 1);
  EXPECT_DOUBLE_EQ(one.flops_per_s, 5e14);     // 1000e12 x 0.5
  EXPECT_DOUBLE_EQ(one.bytes_per_s, 1.6e12);   // 2000e9 x 0.8
  EXPECT_DOUBLE_EQ(one.memory_bytes, 80e9);
  EXPECT_DOUBLE_EQ(one.weight_bytes, 16e9);    // 8e9 x 2
  const auto two = make_roofline(example_gpu(), example_8b(), 2);
  EXPECT_DOUBLE_EQ(two.flops_per_s, 1e15);
  EXPECT_DOUBLE_EQ(two.bytes_per_s, 3.2e12);
  EXPECT_DOUBLE_EQ(two.memory_bytes, 160e9);
  EXPECT_DOUBLE_EQ(two.weight_bytes, 16e9);    // the weights are split, not copied
  EXPECT_THROW(make_roofline(example_gpu(), example_8b(), 0), CostError);
}

TEST(Roofline, PrefillIsComputeBoundForLongPrompts) {
  const auto r = make_roofline(example_gpu(), example_8b(), 1);
  // compute = 2 x 8e9 x 1000 / 5e14 = 0.032 s; weight pass = 16e9 / 1.6e12 = 0.01 s; max = 0.032 s.
  EXPECT_NEAR(prefill_seconds(r, 1000), 0.032, 1e-12);
}

TEST(Roofline, PrefillOfShortPromptsIsBoundByOneWeightPass) {
  const auto r = make_roofline(example_gpu(), example_8b(), 1);
  // compute = 2 x 8e9 x 100 / 5e14 = 0.0032 s < weight pass 0.01 s.
  EXPECT_NEAR(prefill_seconds(r, 100), 0.01, 1e-12);
  EXPECT_EQ(prefill_seconds(r, 0), 0.0);
}

TEST(Roofline, DecodeStepIsBandwidthBound) {
  const auto r = make_roofline(example_gpu(), example_8b(), 1);
  // bytes = 16e9 + 32 x 1000 x 131072 = 16e9 + 4.194304e9 = 20.194304e9; / 1.6e12 = 0.01262144 s.
  // compute = 2 x 8e9 x 32 / 5e14 = 0.001024 s, smaller.
  EXPECT_NEAR(decode_step_seconds(r, 32, 1000), 0.01262144, 1e-12);
  // batch 1, no context: one weight pass, 16e9 / 1.6e12 = 0.01 s.
  EXPECT_NEAR(decode_step_seconds(r, 1, 0), 0.01, 1e-12);
}

TEST(Roofline, DecodeStepTurnsComputeBoundAtLargeBatch) {
  const auto r = make_roofline(example_gpu(), example_8b(), 1);
  // batch 400, no context: memory = 0.01 s; compute = 2 x 8e9 x 400 / 5e14 = 0.0128 s.
  EXPECT_NEAR(decode_step_seconds(r, 400, 0), 0.0128, 1e-12);
}

TEST(Roofline, ConcurrencyLimitIsFreeMemoryOverKvPerSequence) {
  const auto r = make_roofline(example_gpu(), example_8b(), 1);
  // free = 80e9 x 0.9 - 16e9 = 56e9; per sequence 2000 x 131072 = 262144000; 56e9 / that = 213.6 -> 213.
  EXPECT_EQ(concurrency_limit(r, 2000), 213.0);
  // 1000 tokens: 427.2 -> 427, capped at max_concurrency 256.
  EXPECT_EQ(concurrency_limit(r, 1000), 256.0);
}

TEST(Roofline, RequestAndAmortizedSeconds) {
  const auto r = make_roofline(example_gpu(), example_8b(), 1);
  // in 1000, out 200, batch 32: context = 1000 + 100 = 1100.
  // step = (16e9 + 32 x 1100 x 131072) / 1.6e12 = (16e9 + 4.6137344e9) / 1.6e12 = 0.012883584 s.
  // request = prefill 0.032 + 200 x 0.012883584 = 0.032 + 2.5767168 = 2.6087168 s.
  EXPECT_NEAR(request_seconds(r, 1000, 200, 32), 2.6087168, 1e-9);
  // amortized = prefill compute 0.032 + 2.5767168 / 32 = 0.032 + 0.0805224 = 0.1125224 s.
  EXPECT_NEAR(amortized_gpu_seconds(r, 1000, 200, 32), 0.1125224, 1e-9);
}

TEST(Roofline, SeventyBillionBf16OnOne80GbGpuIsRefused) {
  ModelProfile m = example_8b();
  m.name = "example-70b";
  m.parameters = fig(70.6e9);  // x 2 bytes = 141.2e9 bytes, over 80e9 x 0.9 = 72e9 usable
  m.active_parameters = fig(70.6e9);
  m.kv_bytes_per_token = fig(327680);
  const auto one = make_roofline(example_gpu(), m, 1);
  try {
    concurrency_limit(one, 1500);
    FAIL() << "a 70B BF16 model on one 80 GB GPU was accepted";
  } catch (const CostError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("do not fit"), std::string::npos) << what;
    EXPECT_NE(what.find("--gpus"), std::string::npos) << what;
  }
  // Two GPUs: free = 160e9 x 0.9 - 141.2e9 = 2.8e9; per sequence 1500 x 327680 = 491.52e6 -> 5.7 -> 5.
  const auto two = make_roofline(example_gpu(), m, 2);
  EXPECT_EQ(concurrency_limit(two, 1500), 5.0);
}

}  // namespace
}  // namespace overhead::cost
