// Money against hand-computed numbers: $ per 1M tokens from $/h and throughput, the CPU side paid
// for E, and break-even utilization and break-even API price as inverses of each other.
#include <gtest/gtest.h>

#include "cost/cost_model.hpp"

namespace overhead::cost {
namespace {

// A server model with round numbers, set field by field (no step overhead, no attention FLOPs):
//   batch limit = max_concurrency 10 (0.9 x (100e9 - 15.005e9) / 1e6 B = 76,495 tokens of KV hold
//   50 sequences of 1500).
//   For in = 500, out = 1000 at 10 sequences: a request holds its slot 1 prefill step + 999 decode
//   steps, so 10 / 1000 = 0.01 complete per step; a step runs 9.99 decodes of mean context
//   500 + 1000 / 2 = 1000 and 5 prompt tokens, and moves 15.005e9 + (9990 + 5) x 1e6 = 25e9 bytes
//   in 25e9 / 1e12 = 0.025 s on average: 1 step in 100 carries the 500-token prompt (15.005e9 +
//   10490e6 bytes, 0.025495 s), 99 only decode (15.005e9 + 9990e6, 0.024995 s); compute is smaller.
//   Capacity 0.01 / 0.025 = 0.4 requests/s = 400 output tok/s.
// At U = 0.5 (0.2 requests/s): N sequences give a decode-only step of 0.015005 + 0.000999 N s, a
// prompt step 0.0005 s longer, one in 1000 / N steps, so a mean step of 0.015005 + 0.0009995 N;
// N / 1000 = 0.2 x step gives N = 0.003001 / 0.0008001 = 3.75078. TTFT = the prompt step plus the
// wait for the boundary, E[step^2] / (2 E[step]); D = TTFT + 999 mean steps.
Roofline round_roofline() {
  Roofline r;
  r.gpus = 1;
  r.flops_per_s = 1e15;
  r.bytes_per_s = 1e12;
  r.memory_bytes = 100e9;
  r.weight_bytes = 15.005e9;
  r.active_parameters = 5e9;
  r.kv_bytes_per_token = 1e6;
  r.max_concurrency = 10;
  return r;
}

Workload one_request() { return {{500}, {1000}}; }

CostInputs inputs(double utilization) {
  CostInputs in;
  in.gpu = round_roofline();
  in.gpu_usd_per_hour = 7.2;  // 0.002 $/s
  in.cpu_usd_per_hour = 3.6;  // 0.001 $/s
  in.utilization = utilization;
  return in;  // E = 0 unless a test sets it
}

TEST(CostModel, ThroughputAtUtilization) {
  const auto r = compute_cost(inputs(0.5), one_request());
  const double n = 0.003001 / 0.0008001, step = 0.015005 + 0.0009995 * n;
  const double decode = 0.015005 + 0.000999 * n, prompt = decode + 0.0005, c = n / 1000;
  const double ttft = prompt + (c * prompt * prompt + (1 - c) * decode * decode) / (2 * step);
  // After the first token: 999 decode steps, n - 1 of them carrying another sequence's prompt.
  const double tpot = decode + (n - 1) * (prompt - decode) / 999;
  EXPECT_NEAR(r.batch, n, 1e-6);
  EXPECT_EQ(r.batch_limit, 10.0);
  EXPECT_NEAR(r.tpot_s.mean, tpot, 1e-9);
  EXPECT_NEAR(r.ttft_s.p99, ttft, 1e-9);
  EXPECT_NEAR(r.d_s.mean, ttft + 999 * tpot, 1e-6);
  EXPECT_NEAR(r.requests_per_s, 0.2, 1e-12);       // 0.4 x 0.5
  EXPECT_NEAR(r.output_tokens_per_s, 200, 1e-9);   // 0.2 x 1000
  EXPECT_NEAR(r.input_tokens_per_s, 100, 1e-9);    // 0.2 x 500
}

TEST(CostModel, UsdPer1MOutputTokensWithNegligibleE) {
  // $/1M out = $/h / (output tok/s at full load x 3600 x U) x 1e6 = 7.2 / (400 x 3600 x 0.5) x 1e6 = 10.
  const auto r = compute_cost(inputs(0.5), one_request());
  EXPECT_NEAR(r.usd_per_request, 0.01, 1e-12);           // 0.002 $/s x 2.5 s / 0.5
  EXPECT_NEAR(r.usd_per_1m_output_tokens, 10.0, 1e-9);
  EXPECT_NEAR(r.usd_per_1m_input_tokens, 20.0, 1e-9);    // 0.01 / 500 x 1e6
  EXPECT_NEAR(r.usd_per_1m_tokens_blended, 10.0 / 1.5, 1e-9);  // 0.01 / 1500 x 1e6
  // At U = 1 the same GPU hour carries twice the tokens: 7.2 / (400 x 3600) x 1e6 = 5.
  EXPECT_NEAR(compute_cost(inputs(1.0), one_request()).usd_per_1m_output_tokens, 5.0, 1e-9);
  // Two GPUs per replica at the same throughput pay twice the GPU hours.
  auto two = inputs(0.5);
  two.gpu.gpus = 2;
  EXPECT_NEAR(compute_cost(two, one_request()).usd_per_1m_output_tokens, 20.0, 1e-9);
}

TEST(CostModel, CpuSideIsPaidForE) {
  auto in = inputs(0.5);
  in.e = {1e6, 0, "typed in"};  // E = 1 s per request
  const auto r = compute_cost(in, one_request());
  EXPECT_NEAR(r.e_s.mean, 1.0, 1e-12);
  EXPECT_NEAR(r.t_s.mean, 1 + r.d_s.mean, 1e-9);  // E + D
  EXPECT_NEAR(r.e_share, 1.0 / r.t_s.mean, 1e-12);
  EXPECT_NEAR(r.cpu_workers, 0.2, 1e-12);               // 0.2 requests/s x 1 s
  EXPECT_NEAR(r.usd_per_request, 0.011, 1e-12);         // GPU 0.01 + CPU 0.001 $/s x 1 s
  EXPECT_NEAR(r.usd_per_1m_output_tokens, 11.0, 1e-9);  // 0.011 / 1000 x 1e6
  // E(x) = alpha + beta x in: 200 us + 2 us x 500 = 1200 us.
  EXPECT_NEAR((ELinear{200, 2, ""}).at(500), 1200, 1e-12);
}

TEST(CostModel, BreakEvenUtilizationHandCase) {
  // API at $5/1M in and out: 1500 x 5 / 1e6 = 0.0075 $/request. GPU at U = 1 costs 0.005 $/request,
  // so break-even U = 0.005 / 0.0075 = 2/3.
  auto in = inputs(0.5);
  in.api_usd_per_1m = {5.0, 5.0};
  const auto r = compute_cost(in, one_request());
  ASSERT_TRUE(r.break_even_utilization.has_value());
  EXPECT_NEAR(*r.break_even_utilization, 2.0 / 3.0, 1e-12);
  ASSERT_TRUE(r.api_usd_per_1m_tokens_blended.has_value());
  EXPECT_NEAR(*r.api_usd_per_1m_tokens_blended, 5.0, 1e-12);
  // Running at that utilization, the blended price equals the API's.
  const auto at = compute_cost(inputs(2.0 / 3.0), one_request());
  EXPECT_NEAR(at.break_even_api_price, 5.0, 1e-9);
  EXPECT_NEAR(at.usd_per_1m_tokens_blended, 5.0, 1e-9);
}

TEST(CostModel, BreakEvenUtilizationCountsTheCpuSide) {
  // With E = 1 s at 0.001 $/s: U = 0.005 / (0.0075 - 0.001) = 0.005 / 0.0065 = 10/13.
  auto in = inputs(0.5);
  in.e = {1e6, 0, "typed in"};
  in.api_usd_per_1m = {5.0, 5.0};
  const auto r = compute_cost(in, one_request());
  ASSERT_TRUE(r.break_even_utilization.has_value());
  EXPECT_NEAR(*r.break_even_utilization, 10.0 / 13.0, 1e-12);
  // An API cheaper per request than the CPU side alone (1500 x 0.5 / 1e6 = 0.00075 < 0.001): no break-even.
  in.api_usd_per_1m = {0.5, 0.5};
  EXPECT_FALSE(compute_cost(in, one_request()).break_even_utilization.has_value());
}

TEST(CostModel, BreakEvenPriceAndUtilizationAreInverses) {
  for (double e_us : {0.0, 1e6}) {
    for (double u : {0.1, 0.25, 0.5, 0.8, 1.0}) {
      auto in = inputs(u);
      in.e = {e_us, 0, "typed in"};
      const double price = compute_cost(in, one_request()).break_even_api_price;
      auto priced = in;
      priced.utilization = 0.5;  // the utilization the break-even is asked from does not matter
      priced.api_usd_per_1m = {price, price};
      const auto r = compute_cost(priced, one_request());
      ASSERT_TRUE(r.break_even_utilization.has_value()) << "E " << e_us << " us, U " << u;
      EXPECT_NEAR(*r.break_even_utilization, u, 1e-9) << "E " << e_us << " us, U " << u;
    }
  }
}

TEST(CostModel, RejectsBadInputs) {
  EXPECT_THROW(compute_cost(inputs(0.0), one_request()), CostError);
  EXPECT_THROW(compute_cost(inputs(1.5), one_request()), CostError);
  EXPECT_THROW(compute_cost(inputs(0.5), Workload{}), CostError);
  EXPECT_THROW(compute_cost(inputs(0.5), Workload{{500, 600}, {1000}}), CostError);
}

}  // namespace
}  // namespace overhead::cost
