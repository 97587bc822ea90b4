// The step-by-step engine simulation against the steady state `cost` prices (they must agree
// within 2%), against hand-worked single requests, and its memory: the percentiles come from a
// sketch whose error is stated, not from every request.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "cost/engine_profile.hpp"
#include "cost/engine_sim.hpp"
#include "cost/latency_sketch.hpp"
#include "cost/scenario.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kProfiles = std::filesystem::path(OVERHEAD_DATA_DIR) / "profiles";

Roofline shipped(const std::string& gpu, const std::string& model, int tp, const std::string& precision) {
  ScenarioSpec spec;
  spec.profiles_dir = kProfiles;
  spec.gpu = gpu;
  spec.model = model;
  spec.gpus = tp;
  spec.tp = tp;
  spec.precision = precision;
  spec.kv_dtype = precision == "bf16" ? "bf16" : "fp8";
  return make_scenario(spec).replica;
}

EngineSimConfig closed(const Roofline& r, double clients, double in, double out, std::size_t requests) {
  EngineSimConfig c;
  c.replica = r;
  c.closed_loop = true;
  c.concurrency = clients;
  c.requests = requests;
  c.workload = {{in, out}};
  return c;
}

// cost's steady state and simulate's saturated closed loop on the same inputs: throughput within
// 2%; the mean TPOT within 5% (the simulation's steps vary with the prompts each carries).
TEST(EngineSim, SaturatedRunAgreesWithTheSteadyState) {
  struct Case {
    const char *gpu, *model;
    int tp;
    const char* precision;
    double in, out;
  };
  const Case cases[] = {{"h100-sxm", "llama-3.1-8b", 1, "fp8", 128, 128},
                        {"h200", "llama-3.3-70b", 1, "fp8", 1000, 1000},
                        {"h100-sxm", "llama-3.3-70b", 2, "fp8", 5000, 500},
                        {"a100-80g", "mixtral-8x7b", 2, "bf16", 500, 200}};
  for (const auto& k : cases) {
    SCOPED_TRACE(std::string(k.gpu) + " " + k.model);
    const auto r = shipped(k.gpu, k.model, k.tp, k.precision);
    const double limit = concurrency_limit(r, k.in + k.out);
    const auto s = steady_state(r, limit, k.in, k.out, false);
    const auto sim = simulate_engine(closed(r, limit, k.in, k.out, 20000));
    EXPECT_NEAR(sim.output_tokens_per_s / s.output_tokens_per_s, 1.0, 0.02);
    EXPECT_NEAR(sim.tpot_s.mean / s.tpot_s, 1.0, 0.05);
  }
}

// A measured engine: its request overhead (the TTFT's base beyond a step: HTTP, tokenizing) is
// spent outside the engine, holding no slot, and is in the TTFT; the simulation and the steady
// state agree on all three figures.
TEST(EngineSim, AMeasuredEngineClosedLoopAgreesWithTheSteadyState) {
  EngineProfile p;
  p.fit.ttft_base_s = 0.03;
  p.fit.prefill_s_per_token = 2e-4;
  p.fit.ttft_s_per_token_squared = 1e-7;
  p.fit.step_overhead_s = 0.003;
  p.fit.sequence_overhead_s = 0.001;
  p.fit.context_s_per_token = 2e-6;
  p.max_concurrency = 8;
  const Roofline r = roofline_from_profile(p);
  ASSERT_GT(r.request_overhead_s, 0.02);
  for (const double clients : {1.0, 3.0, 6.0}) {
    SCOPED_TRACE(clients);
    const auto s = steady_state(r, clients, 256, 64, false);
    const auto sim = simulate_engine(closed(r, clients, 256, 64, 4000));
    EXPECT_NEAR(sim.output_tokens_per_s / s.output_tokens_per_s, 1.0, 0.05);
    EXPECT_NEAR(sim.tpot_s.mean / s.tpot_s, 1.0, 0.10);
    EXPECT_NEAR(sim.ttft_s.mean / s.ttft_s, 1.0, 0.20);
    EXPECT_GT(sim.ttft_s.mean, r.request_overhead_s);
  }
}

TEST(EngineSim, OneRequestAloneTakesItsStepsByHand) {
  Roofline r;
  r.flops_per_s = 1e15;
  r.bytes_per_s = 1e12;
  r.memory_bytes = 100e9;
  r.weight_bytes = 10e9;
  r.active_parameters = 1e6;
  r.kv_bytes_per_token = 1e6;
  r.max_concurrency = 4;
  r.prefill_chunk_tokens = 100;
  // One client, in 250, out 3: prefill steps of 100, 100 and 50 tokens (10e9 + t x 1e6 bytes:
  // 0.0101, 0.0101, 0.01005 s), the first token at their end; then 2 decode steps with contexts
  // 251 and 252 (0.010251 and 0.010252 s).
  const auto sim = simulate_engine(closed(r, 1, 250, 3, 1));
  const double ttft = 0.0101 + 0.0101 + 0.01005;
  EXPECT_NEAR(sim.ttft_s.mean, ttft, 1e-12);
  EXPECT_NEAR(sim.latency_s.mean, ttft + 0.010251 + 0.010252, 1e-12);
  EXPECT_NEAR(sim.tpot_s.mean, (0.010251 + 0.010252) / 2, 1e-12);
  EXPECT_EQ(sim.steps, 5u);
}

// A replica whose KV holds 25 tokens (1 MB a token beside 10 GB of weights), up to 4 sequences,
// prompts in chunks of 100: the two retraction and preemption cases below.
Roofline kv_for_25_tokens() {
  Roofline r;
  r.flops_per_s = 1e15;
  r.bytes_per_s = 1e12;
  r.memory_bytes = 10e9 + 25e6;
  r.weight_bytes = 10e9;
  r.memory_fraction = 1;
  r.active_parameters = 1e6;
  r.kv_bytes_per_token = 1e6;
  r.max_concurrency = 4;
  r.prefill_chunk_tokens = 100;
  return r;
}

// KV for 25 tokens and two requests of 10 in and 10 out. Reserving the whole output (20 tokens
// each) runs them one after the other: 2 x (1 prefill + 9 decode) steps. Reserving none (vLLM
// V1: blocks as tokens are computed) admits both on their prompts; after two decode steps their
// 24 tokens leave no room for the next two, so the last admitted is preempted and waits until its
// prompt and its 2 tokens fit beside the other's growing KV (when that one leaves), then computes
// them again and goes on: 18 steps, every token produced, its first token where it first came.
TEST(EngineSim, AnEngineThatReservesNoOutputPreemptsTheLastAdmittedAndRecomputesIt) {
  Roofline r = kv_for_25_tokens();
  const auto whole = simulate_engine(closed(r, 2, 10, 10, 2));
  EXPECT_EQ(whole.steps, 20u);
  r.output_reserved = 0;
  const auto on_demand = simulate_engine(closed(r, 2, 10, 10, 2));
  EXPECT_EQ(on_demand.requests, 2u);
  EXPECT_NEAR(on_demand.total_output_tokens_per_s * on_demand.span_s, 20, 1e-9);
  EXPECT_EQ(on_demand.steps, 18u);  // A: 1 + 9; B readmitted when A leaves: 1 (12 tokens) + 7
  EXPECT_NEAR(on_demand.ttft_s.mean, (10e9 + 20e6) / 1e12, 1e-12);  // both first tokens at step 1's end
}

// SGLang's reservation adapts: with its share already at 0 both requests are admitted on their
// prompts; when the next decode does not fit it retracts (the fewest output tokens, the later
// admitted among equals) until the other has room for 2 more tokens (the headroom here), sets the
// share to (2 produced + 2) / 10 = 0.4 and puts the retracted at the queue's tail; it runs again
// when its prompt and its 2 tokens fit: the same 18 steps as vLLM's preemption on this pair.
TEST(EngineSim, SglangRetractsTheFewestOutputTokensAndRaisesItsShare) {
  Roofline r = kv_for_25_tokens();
  r.output_reserved = 0.7;
  r.reserve_adapts = true;
  r.reserve_floor = 0;
  r.reserve_decay = 0.7;  // at its floor after one step
  r.retract_headroom_steps = 2;
  const auto run = simulate_engine(closed(r, 2, 10, 10, 2));
  EXPECT_EQ(run.requests, 2u);
  EXPECT_NEAR(run.total_output_tokens_per_s * run.span_s, 20, 1e-9);
  EXPECT_EQ(run.steps, 18u);
  EXPECT_NEAR(run.ttft_s.mean, (10e9 + 20e6) / 1e12, 1e-12);
}

TEST(EngineSim, BelowCapacityTheRateIsServedAndNothingSaturates) {
  const auto r = shipped("h100-sxm", "llama-3.1-8b", 1, "fp8");
  EngineSimConfig c;
  c.replica = r;
  c.replicas = 2;
  c.arrival_rate = 20;
  c.requests = 20000;
  c.workload = {{200, 400}};
  const auto sim = simulate_engine(c);
  EXPECT_NEAR(sim.requests_per_s / 20, 1.0, 0.05);
  EXPECT_TRUE(sim.saturated_stage.empty());
  EXPECT_EQ(sim.requests, 20000u);
}

// An offline run (every request sent at 0) reports every output token over the whole span: its
// middle completions bunch within a few steps, and their window once printed 229,764 tok/s for a
// run of about 2,000.
TEST(EngineSim, AnOfflineRunCountsEveryTokenOverTheWholeSpan) {
  const auto r = shipped("h100-sxm", "llama-3.1-8b", 1, "fp8");
  const auto sim = simulate_engine(closed(r, 200, 500, 300, 200));
  EXPECT_DOUBLE_EQ(sim.output_tokens_per_s, 200 * 300 / sim.span_s);
  EXPECT_DOUBLE_EQ(sim.output_tokens_per_s, sim.total_output_tokens_per_s);
  EXPECT_DOUBLE_EQ(sim.requests_per_s, 200 / sim.span_s);
}

TEST(EngineSim, SequenceThatCannotFitIsRefused) {
  const auto r = shipped("h100-sxm", "llama-3.3-70b", 2, "bf16");
  EXPECT_THROW(simulate_engine(closed(r, 1, 64000, 400, 10)), CostError);
}

TEST(LatencySketch, QuantilesWithinTheStatedErrorOfTheExactOnes) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(-3, 1.5);
  std::vector<double> v(200000);
  LatencySketch s;
  for (auto& x : v) {
    x = d(rng);
    s.add(x);
  }
  std::sort(v.begin(), v.end());
  for (const double q : {0.5, 0.95, 0.99}) {
    const double exact = v[static_cast<std::size_t>(std::ceil(q * v.size())) - 1];
    EXPECT_NEAR(s.quantile(q) / exact, 1.0, LatencySketch::kRelativeError * 1.0001) << q;
  }
  EXPECT_EQ(s.count(), v.size());
}

}  // namespace
}  // namespace overhead::cost
