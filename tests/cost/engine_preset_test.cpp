// The engine presets (data/engines/): every setting of every shipped version cites its source;
// what each one sets on the deployment it is given (vLLM's budget by GPU, SGLang's memory by TP,
// the memory fraction of the whole GPU against what the weights leave); and multi-step
// scheduling, whose bursts the steady state and the step simulation price alike.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cost/engine_preset.hpp"
#include "cost/engine_sim.hpp"
#include "cost/scenario.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kProfiles = std::filesystem::path(OVERHEAD_DATA_DIR) / "profiles";
const std::filesystem::path kEngines = default_engines_dir(kProfiles);

Scenario deployment(const std::string& gpu, const std::string& model, int tp, const std::string& preset) {
  ScenarioSpec spec;
  spec.profiles_dir = kProfiles;
  spec.gpu = gpu;
  spec.model = model;
  spec.gpus = tp;
  spec.precision = "fp8";
  spec.engine_preset = preset;
  return make_scenario(spec);
}

TEST(EnginePreset, EveryShippedSettingCitesItsSource) {
  const auto names = list_engine_presets(kEngines);
  ASSERT_EQ(names, (std::vector<std::string>{"llamacpp", "sglang", "trtllm", "vllm"}));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    EngineParams e;
    const auto p = apply_engine_preset(name, kEngines, {"h100-sxm", 80, 1}, e);
    EXPECT_FALSE(p.version.empty());
    EXPECT_FALSE(p.note.empty());
    ASSERT_EQ(p.settings.size(), 10u);
    for (const auto& s : p.settings) EXPECT_FALSE(s.source.empty()) << s.name;
    EXPECT_EQ(e.preset, name + "@" + p.version);
  }
}

TEST(EnginePreset, VllmRunsItsOwnAllReduceOnAFullMeshAndTheBaseARing) {
  // vLLM 0.11's custom all-reduce (8 MiB) on 8 MI300X of one Infinity Fabric mesh; TensorRT-LLM's
  // preset keeps the base fit's ring (its latency was fitted as one).
  const auto v = deployment("mi300x", "llama-3.3-70b", 8, "vllm");
  EXPECT_TRUE(v.replica.full_mesh);
  EXPECT_EQ(v.replica.custom_allreduce_max_bytes, 8.0 * 1024 * 1024);
  const auto t = deployment("mi300x", "llama-3.3-70b", 8, "trtllm");
  EXPECT_EQ(t.replica.custom_allreduce_max_bytes, 0);
  // A decode of one sequence: 2 x 80 all-reduces of 16 KiB, one-shot (one latency each) against
  // the ring's 14 hops each, the rest of the step alike.
  auto ring = v.replica;
  ring.custom_allreduce_max_bytes = 0;
  const double lat = v.replica.allreduce_latency_s;
  EXPECT_NEAR(step_seconds(ring, {1, 128, 0, 0}) - step_seconds(v.replica, {1, 128, 0, 0}),
              160 * (13 * lat + (14.0 / 8 - 7) * 16384 / v.replica.link_bytes_per_s), 1e-9);
}

TEST(EnginePreset, APresetRunsAtTheEfficiencyItsEnginesResultsWereFittedTo) {
  // vLLM's and SGLang's presets multiply the base fit's efficiencies by the factor fitted on
  // their own published rows (data/calibration/engine_factors.json), as the calibration checks
  // them; TensorRT-LLM's is the base fit, and an --engine file of one's own takes no factor.
  const auto factors = load_engine_factors(kEngines.parent_path() / "calibration" / "engine_factors.json");
  const auto base = load_engine_params(kEngines.parent_path() / "calibration" / "engine.json");
  for (const std::string engine : {"vllm", "sglang"}) {
    SCOPED_TRACE(engine);
    const auto s = deployment("h100-sxm", "llama-3.1-8b", 1, engine);
    EXPECT_DOUBLE_EQ(s.serving.engine.efficiency_factor, factors.at(engine));
    EXPECT_NEAR(s.serving.engine.bandwidth_efficiency, base.bandwidth_efficiency * factors.at(engine), 1e-12);
    EXPECT_NEAR(s.serving.engine.compute_efficiency, base.compute_efficiency * factors.at(engine), 1e-12);
    EXPECT_NE(s.serving.engine.origin.find("efficiency factor"), std::string::npos) << s.serving.engine.origin;
  }
  EXPECT_EQ(deployment("h100-sxm", "llama-3.1-8b", 1, "trtllm").serving.engine.efficiency_factor, 1);
  ScenarioSpec own;
  own.profiles_dir = kProfiles;
  own.gpu = "h100-sxm";
  own.model = "llama-3.1-8b";
  own.precision = "fp8";
  own.engine_preset = "vllm";
  own.engine_file = (kEngines.parent_path() / "calibration" / "engine.json").string();
  own.gpu_usd_per_hour = 1;
  own.cpu_usd_per_hour = 1;
  EXPECT_EQ(make_scenario(own).serving.engine.efficiency_factor, 1);
}

TEST(EnginePreset, VllmOnAnH100CapsAt1024AndCountsItsFractionOfTheWholeMemory) {
  const auto s = deployment("h100-sxm", "llama-3.1-8b", 1, "vllm");
  EXPECT_EQ(s.replica.max_concurrency, 1024);
  EXPECT_EQ(s.replica.prefill_chunk_tokens, 8192);
  EXPECT_TRUE(s.replica.memory_of_total);
  // 0.9 x the 81559 MiB an H100 reports less the weights (the runtime runs in the other 0.1),
  // against TensorRT-LLM's 0.9 x (memory - the runtime's reserve - weights).
  EXPECT_EQ(s.replica.reserved_bytes, 0);
  EXPECT_NEAR(kv_capacity_tokens(s.replica) * s.replica.kv_bytes_per_token, 0.9 * 81559.0 * 1024 * 1024 - s.replica.weight_bytes, 1);
  const auto trt = deployment("h100-sxm", "llama-3.1-8b", 1, "trtllm");
  EXPECT_GT(trt.replica.reserved_bytes, 0);
  EXPECT_NEAR(kv_capacity_tokens(trt.replica) * trt.replica.kv_bytes_per_token,
              0.9 * (81559.0 * 1024 * 1024 - trt.replica.reserved_bytes - trt.replica.weight_bytes), 1);
  // Other GPUs (the A100 by name): the 2048-token budget of vLLM's OpenAI server and 256 sequences.
  const auto a100 = deployment("a100-80g", "llama-3.1-8b", 1, "vllm");
  EXPECT_EQ(a100.replica.prefill_chunk_tokens, 2048);
  EXPECT_EQ(a100.replica.max_concurrency, 256);
  // V1's KV: allocated as tokens are computed (the last admitted preempted when the cache is
  // full), one token budget for decodes and prompt chunks; TensorRT-LLM reserves the whole output.
  EXPECT_EQ(s.replica.output_reserved, 0);
  EXPECT_TRUE(s.replica.decodes_share_budget);
  EXPECT_EQ(trt.replica.output_reserved, 1);
  EXPECT_FALSE(trt.replica.decodes_share_budget);
}

TEST(EnginePreset, SglangMemoryFractionFollowsTheTensorParallelism) {
  EXPECT_DOUBLE_EQ(deployment("h100-sxm", "llama-3.1-8b", 1, "sglang").replica.memory_fraction, 0.88);
  // Its reserved share of the output is new_token_ratio: 0.7, falling over 600 steps to 0.098.
  const auto r = deployment("h100-sxm", "llama-3.1-8b", 1, "sglang").replica;
  EXPECT_TRUE(r.reserve_adapts);
  EXPECT_DOUBLE_EQ(r.output_reserved, 0.7);
  EXPECT_DOUBLE_EQ(r.reserve_floor, 0.098);
  EXPECT_NEAR(r.reserve_decay, (0.7 - 0.098) / 600, 1e-15);
  EXPECT_DOUBLE_EQ(r.retract_headroom_steps, 20);
  EXPECT_EQ(deployment("h100-sxm", "llama-3.1-8b", 1, "sglang").replica.reserved_bytes, 0);
  EXPECT_DOUBLE_EQ(deployment("h100-sxm", "llama-3.3-70b", 2, "sglang").replica.memory_fraction, 0.87);
  EXPECT_DOUBLE_EQ(deployment("h100-sxm", "llama-3.1-405b", 8, "sglang").replica.memory_fraction, 0.81);
}

TEST(EnginePreset, UnknownNamesAndVersionsAreRefusedWithTheKnownOnes) {
  EngineParams e;
  try {
    apply_engine_preset("vllm@0.1", kEngines, {}, e);
    ADD_FAILURE() << "an unknown version was accepted";
  } catch (const CostError& ex) {
    EXPECT_NE(std::string(ex.what()).find("known: 0.11, v1"), std::string::npos) << ex.what();
  }
  EXPECT_THROW(apply_engine_preset("tgi", kEngines, {}, e), CostError);
  // llama.cpp's slots are the deployment's: --max-batch is asked for.
  EXPECT_THROW(deployment("l4", "llama-3.1-8b", 1, "llamacpp"), CostError);
}

// Bursts of n decode steps: an arrival waits for the burst in progress (n steps / 2 on average),
// and n - 1 of every n tokens follow the one before at once. cost and simulate agree.
TEST(EnginePreset, MultiStepBurstsLengthenTheTtftAlikeInCostAndSimulate) {
  auto s = deployment("h100-sxm", "llama-3.1-8b", 1, "vllm");
  Roofline r = s.replica;
  r.scheduler_steps = 8;
  const double rate = 5;
  const auto one = steady_state_at_rate(s.replica, rate, 500, 200);
  const auto burst = steady_state_at_rate(r, rate, 500, 200);
  EXPECT_GT(burst.ttft_s, one.ttft_s + 3 * burst.step_s);
  EXPECT_EQ(burst.itl_p50_s, 0);
  EngineSimConfig c;
  c.replica = r;
  c.arrival_rate = rate;
  c.requests = 4000;
  c.workload = {{500, 200}};
  const auto sim = simulate_engine(c);
  EXPECT_NEAR(sim.ttft_s.mean / burst.ttft_s, 1, 0.10) << sim.ttft_s.mean << " " << burst.ttft_s;
  EXPECT_EQ(sim.itl_s.p50, 0);
  EXPECT_NEAR(sim.itl_s.mean / burst.step_s, 1, 0.10);
}

}  // namespace
}  // namespace overhead::cost
