// The server model against worked examples computed by hand: step times (bandwidth-bound decode,
// compute-bound prefill, the all-reduce of tensor parallelism, the experts an MoE step reads), the
// steady state of a continuous-batching replica, the KV capacity, and the refusal of what cannot
// fit, with the numbers in the message.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "cost/roofline.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kProfiles = std::filesystem::path(OVERHEAD_DATA_DIR) / "profiles";

// 8e9 parameters in BF16 (16e9 bytes), 131072 B of KV per token, on 80 GB at 1.6e12 B/s and
// 5e14 FLOP/s achieved; no attention FLOPs, no step overhead unless a test sets them.
Roofline example() {
  Roofline r;
  r.flops_per_s = 5e14;
  r.bytes_per_s = 1.6e12;
  r.memory_bytes = 80e9;
  r.weight_bytes = 16e9;
  r.active_parameters = 8e9;
  r.kv_bytes_per_token = 131072;
  r.max_concurrency = 256;
  return r;
}

TEST(ServerModel, DecodeStepIsBandwidthBoundPlusOverhead) {
  auto r = example();
  r.step_overhead_s = 0.002;
  // bytes = 16e9 + 32 x 1000 x 131072 = 20.194304e9; / 1.6e12 = 0.01262144 s.
  // compute = 2 x 8e9 x 32 / 5e14 = 0.001024 s, smaller.
  EXPECT_NEAR(step_seconds(r, {32, 32000, 0, 0}), 0.002 + 0.01262144, 1e-12);
}

TEST(ServerModel, PrefillInTheStepTurnsItComputeBound) {
  const auto r = example();
  // 4000 prompt tokens: bytes 16e9 + 4000 x 131072 = 16.524288e9 -> 0.01032768 s;
  // compute 2 x 8e9 x 4000 / 5e14 = 0.128 s.
  EXPECT_NEAR(step_seconds(r, {0, 0, 4000, 0}), 0.128, 1e-12);
  // Attention FLOPs count the context: 4 x 32 layers x 32 heads x 128 = 524288 per context token.
  auto a = r;
  a.attention_flops_per_context_token = 524288;
  // + 524288 x 4000 x 2000 / 5e14 = 0.00838861 s.
  EXPECT_NEAR(step_seconds(a, {0, 0, 4000, 4000.0 * 2000}), 0.128 + 524288.0 * 8e6 / 5e14, 1e-12);
}

// The example on `gpus` GPUs: 32 layers of hidden size 4096, links of 450 GB/s and 8 us.
Roofline tensor_parallel_example(int gpus) {
  auto r = example();
  r.gpus = gpus;
  r.layers = 32;
  r.hidden_size = 4096;
  r.allreduce_latency_s = 8e-6;
  r.link_bytes_per_s = 450e9;
  return r;
}

TEST(ServerModel, TensorParallelStepPaysTwoAllReducesPerLayer) {
  const auto r = tensor_parallel_example(2);
  // 100 tokens: payload 100 x 4096 x 2 = 819200 B; one ring all-reduce over 2 GPUs: 2 hops of
  // 8e-6 s latency, each GPU moving 2 x 1/2 of the payload: 2 x 8e-6 + 819200 / 450e9.
  const double one = 2 * 8e-6 + 819200.0 / 450e9;
  const double plain = step_seconds(example(), {100, 0, 0, 0});
  EXPECT_NEAR(step_seconds(r, {100, 0, 0, 0}), plain + 2 * 32 * one, 1e-12);
}

TEST(ServerModel, AFullMeshRunsSmallAllReducesInOneOrTwoExchanges) {
  // 8 GPUs each linked to every other and an engine with vLLM's custom all-reduce up to 8 MiB:
  // one-shot under 256 KiB, two-shot above it; the ring past 8 MiB, on a GPU count it has no
  // kernel for, without the mesh, and for an engine without the kernels. 32 layers x 2
  // all-reduces a step.
  auto mesh = tensor_parallel_example(8);
  mesh.full_mesh = true;
  mesh.custom_allreduce_max_bytes = 8 * 1024 * 1024;
  auto ring = mesh;
  ring.full_mesh = false;
  auto base = mesh;  // an engine without its own kernels (the base fit's)
  base.custom_allreduce_max_bytes = 0;
  const auto comm = [](const Roofline& r, double tokens) {
    return step_seconds(r, {tokens, 0, 0, 0}) - step_seconds(example(), {tokens, 0, 0, 0});
  };
  const auto ring_one = [](double payload) { return 14 * 8e-6 + 14.0 / 8 * payload / 450e9; };
  // 10 tokens: 81920 B, one-shot: one latency, every peer's whole payload read.
  EXPECT_NEAR(comm(mesh, 10), 64 * (8e-6 + 7 * 81920.0 / 450e9), 1e-12);
  // 100 tokens: 819200 B, two-shot: two latencies, 2 x 7/8 of the payload.
  EXPECT_NEAR(comm(mesh, 100), 64 * (2 * 8e-6 + 2 * 7.0 / 8 * 819200 / 450e9), 1e-12);
  // 2000 tokens: 16.4 MB, past 8 MiB: the ring, as without the mesh.
  EXPECT_NEAR(comm(mesh, 2000), 64 * ring_one(2000 * 8192.0), 1e-12);
  EXPECT_NEAR(comm(ring, 10), 64 * ring_one(81920), 1e-12);
  EXPECT_NEAR(comm(base, 10), 64 * ring_one(81920), 1e-12);
  // A batch of one decode on 8 GPUs: 2 x 32 latencies, not 2 x 32 x 14.
  EXPECT_LT(comm(mesh, 1), comm(ring, 1) / 10);
  // 3 GPUs: no custom kernel (2, 4, 6 or 8 only): the ring's 4 hops.
  mesh.gpus = 3;
  EXPECT_NEAR(comm(mesh, 10), 64 * (4 * 8e-6 + 4.0 / 3 * 81920 / 450e9), 1e-12);
}

TEST(ServerModel, AGpuThatReachesLessOfItsPeakComputesSlower) {
  // The fitted compute efficiency is of the fitted GPU's measured matmul share (0.803 of the
  // H100's peak); the MI300X's matmuls reach 0.511 of its own, so it computes at 0.511 / 0.803
  // of the efficiency, and a GPU with no measurement keeps it.
  ServingOptions o;
  o.tp = 8;
  o.precision = "fp8";
  o.kv_dtype = "fp8";
  o.engine.compute_efficiency = 0.5;
  o.engine.matmul_reference_share = 0.803;
  const auto model = load_model("llama-3.3-70b", kProfiles);
  const auto mi300x = make_roofline(load_gpu("mi300x", kProfiles), model, o);
  EXPECT_NEAR(mi300x.flops_per_s, 2614.9e12 * 0.5 * 0.511 / 0.803 * 8, 1e6);
  EXPECT_TRUE(mi300x.full_mesh);
  const auto h100 = make_roofline(load_gpu("h100-sxm", kProfiles), model, o);
  EXPECT_NEAR(h100.flops_per_s, 1979e12 * 0.5 * 8, 1e6);
  const auto b200 = make_roofline(load_gpu("b200", kProfiles), model, o);
  EXPECT_NEAR(b200.flops_per_s, load_gpu("b200", kProfiles).peak_for("fp8") * 1e12 * 0.5 * 8, 1e6);
  // Without a reference share (an engine file that gives none) every GPU keeps the efficiency.
  o.engine.matmul_reference_share = 0;
  EXPECT_NEAR(make_roofline(load_gpu("mi300x", kProfiles), model, o).flops_per_s, 2614.9e12 * 0.5 * 8, 1e6);
}

TEST(ServerModel, MoeStepReadsOnlyTheExpertsItsTokensRoute) {
  auto r = example();
  r.experts = 8;
  r.experts_per_token = 2;
  r.expert_weight_bytes = 12e9;  // of the 16e9
  // One token touches 1 - (6/8)^1 = 1/4 of the experts: 4e9 + 12e9 / 4 = 7e9 bytes.
  EXPECT_NEAR(step_seconds(r, {1, 0, 0, 0}), 7e9 / 1.6e12, 1e-12);
  // Many tokens touch them all.
  EXPECT_NEAR(step_seconds(r, {200, 0, 0, 0}), std::max(16e9 / 1.6e12, 2 * 8e9 * 200 / 5e14), 1e-9);
}

TEST(ServerModel, SteadyStateOfContinuousBatching) {
  const auto r = example();
  // 10 sequences of in 1000, out 101: each holds its slot 1 prefill step + 100 decode steps, so
  // c = 10 / 101 complete per step, and c x 100 = 9.90099 decode in every step, with a mean
  // context of 1000 + 101 / 2 = 1050.5: 10400.99 tokens of KV.
  //   decode-only step: (16e9 + 10400.99 x 131072) / 1.6e12 = 0.0108520 s (compute 0.0003 s);
  //   a step with a 1000-token prompt: compute 2 x 8e9 x 1009.9 / 5e14 = 0.0323168 s (memory
  //   0.0109340 s); one step in 1 / c carries a prompt.
  const double c = 10.0 / 101, decodes = c * 100, context = decodes * 1050.5;
  const double decode = (16e9 + context * 131072) / 1.6e12;
  const double prompt = 2 * 8e9 * (decodes + 1000) / 5e14;
  const double mean = c * prompt + (1 - c) * decode;
  EXPECT_NEAR(decode, 0.0108520, 1e-7);
  EXPECT_NEAR(prompt, 0.0323168, 1e-7);
  const auto s = steady_state(r, 10, 1000, 101, false);
  EXPECT_NEAR(s.step_s, mean, 1e-12);
  EXPECT_NEAR(s.requests_per_s, c / mean, 1e-9);
  EXPECT_NEAR(s.output_tokens_per_s, s.requests_per_s * 101, 1e-9);
  // After its first token a request sees 100 decode steps, 9 of which carry the other
  // sequences' prompts (its own prompt step is before its first token).
  const double tpot = decode + 9 * (prompt - decode) / 100;
  EXPECT_NEAR(s.tpot_s, tpot, 1e-12);
  EXPECT_NEAR(s.ttft_s + 100 * s.tpot_s, 10 / s.requests_per_s, 1e-12);  // Little's law
  // Closed loop: the next request arrives at a boundary; its prompt step is its TTFT.
  EXPECT_NEAR(s.ttft_s, prompt, 1e-12);
  // Open loop: and the wait for the step in progress, E[step^2] / (2 E[step]).
  const double residual = (c * prompt * prompt + (1 - c) * decode * decode) / (2 * mean);
  EXPECT_NEAR(steady_state(r, 10, 1000, 101, true).ttft_s, prompt + residual, 1e-12);
  // Twice the clients over a batch cap of 10 wait: TTFT = clients / rate - 100 TPOTs.
  auto capped = r;
  capped.max_concurrency = 10;
  const auto q = steady_state(capped, 20, 1000, 101, false);
  EXPECT_NEAR(q.requests_per_s, s.requests_per_s, 1e-9);
  EXPECT_NEAR(q.ttft_s, 20 / s.requests_per_s - 100 * tpot, 1e-9);
}

TEST(ServerModel, PrefillBudgetBoundsTheRateOfLongPrompts) {
  auto r = example();
  r.prefill_chunk_tokens = 2048;
  // 200 sequences of in 8192, out 2: 4 prefill steps + 1 decode step each would complete 40 per
  // step, but the budget takes 2048 / 8192 = 0.25 prompts per step.
  const auto s = steady_state(r, 200, 8192, 2, false);
  EXPECT_TRUE(s.prefill_bound);
  EXPECT_NEAR(s.completions_per_step, 0.25, 1e-12);
}

TEST(ServerModel, KvCapacityIsTheMemoryFractionOfWhatTheWeightsLeave) {
  const auto r = example();
  // 0.9 x (80e9 - 16e9) / 131072 = 439,453.1 tokens.
  EXPECT_NEAR(kv_capacity_tokens(r), 0.9 * 64e9 / 131072, 1e-6);
  EXPECT_EQ(concurrency_limit(r, 2000), 219.0);  // floor(219.7)
  EXPECT_EQ(concurrency_limit(r, 1000), 256.0);  // 439 capped at 256
}

TEST(ServerModel, SequenceThatCannotFitIsRefusedWithTheNumbers) {
  const auto r = example();
  try {
    concurrency_limit(r, 500000);
    FAIL() << "a sequence larger than the KV cache was accepted";
  } catch (const CostError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("500000 tokens needs 65.5 GB"), std::string::npos) << what;
    EXPECT_NE(what.find("57.6 GB for KV"), std::string::npos) << what;
  }
  auto heavy = example();
  heavy.weight_bytes = 90e9;
  EXPECT_THROW(kv_capacity_tokens(heavy), CostError);
}

TEST(ServerModel, ShippedProfilesBuildOneReplica) {
  const auto gpu = load_gpu("h100-sxm", kProfiles);
  const auto model = load_model("llama-3.3-70b", kProfiles);
  ServingOptions o;
  o.tp = 2;
  o.precision = "fp8";
  o.kv_dtype = "fp8";
  const auto r = make_roofline(gpu, model, o);
  EXPECT_EQ(r.gpus, 2);
  // FP8 compute roof: 1979 TFLOP/s per GPU (not the BF16 peak halved).
  EXPECT_NEAR(r.flops_per_s, 1979e12 * o.engine.compute_efficiency * 2, 1);
  // FP8 linear weights, BF16 embeddings: 68.45e9 x 1 + 2.10e9 x 2 = 72.65e9 bytes.
  EXPECT_NEAR(r.weight_bytes, 72.65e9, 0.05e9);
  EXPECT_DOUBLE_EQ(r.kv_bytes_per_token, 2.0 * 80 * 8 * 128 * 1);
  // A100 has no FP8 tensor cores: FP8 weights compute at its BF16 peak.
  const auto a100 = make_roofline(load_gpu("a100-80g", kProfiles), model, o);
  EXPECT_NEAR(a100.flops_per_s, 312e12 * o.engine.compute_efficiency * 2, 1);
  ServingOptions zero;
  zero.tp = 0;
  EXPECT_THROW(make_roofline(gpu, model, zero), CostError);
}

TEST(ServerModel, SeventyBWithLongPromptsOnTwoH100sIsRefused) {
  // 70B in BF16 on 2 x H100 (81559 MiB each, 171.0e9 bytes), no runtime reserve:
  // 0.9 x (171.0e9 - 141.1e9) = 26.9e9 bytes of KV at 327680 B per token hold 82,200 tokens:
  // 96,000 + 400 do not fit (64,000 + 400 do, at 21.1 GB).
  ServingOptions o;
  o.tp = 2;
  const auto r = make_roofline(load_gpu("h100-sxm", kProfiles), load_model("llama-3.3-70b", kProfiles), o);
  EXPECT_THROW(concurrency_limit(r, 96400), CostError);
  EXPECT_NO_THROW(concurrency_limit(r, 64400));
  // A runtime reserve of 4 GB a GPU takes 0.9 x 8e9 bytes from the KV: 60,200 tokens.
  o.engine.runtime_reserve_gb = 4;
  const auto reserved = make_roofline(load_gpu("h100-sxm", kProfiles), load_model("llama-3.3-70b", kProfiles), o);
  EXPECT_NEAR(kv_capacity_tokens(r) - kv_capacity_tokens(reserved), 0.9 * 8e9 / 327680, 1);
  EXPECT_THROW(concurrency_limit(reserved, 64400), CostError);
}

// DeepSeek-V3 on 8 x H200 (FP8 weights, BF16 cache), by hand from its config.json: tensor
// parallelism splits MLA's 128 heads but not the latent they share, so every GPU caches all 61 x
// 576 values of a token (8 copies); the down projections q_a (7168 x 1536) and kv_a (7168 x 576)
// are whole on every GPU, 7 copies more to hold and run; a decode attends over the latent (2 x
// 128 x (2 x 512 + 64) FLOPs a layer and context token), a prompt over the expanded heads (2 x 128
// x (192 + 128)), at the BF16 roof because the cache is BF16.
TEST(ServerModel, LatentAttentionUnderTensorParallelism) {
  const auto model = load_model("deepseek-v3", kProfiles);
  const auto gpu = load_gpu("h200", kProfiles);
  ServingOptions o;
  o.tp = 8;
  o.kv_dtype = "bf16";
  const auto r = make_roofline(gpu, model, o);
  EXPECT_DOUBLE_EQ(r.kv_bytes_per_token, 8 * 61.0 * 576 * 2);
  const double replicated = 61.0 * 7168 * (1536 + 576);
  EXPECT_DOUBLE_EQ(model.arch.replicated_attention_parameters(), replicated);
  ServingOptions one = o;
  one.tp = 1;
  const auto single = make_roofline(gpu, model, one);
  EXPECT_NEAR(r.weight_bytes - single.weight_bytes, 7 * replicated * 1, 1);
  EXPECT_NEAR(r.active_parameters - single.active_parameters, 7 * replicated, 1);
  EXPECT_DOUBLE_EQ(r.decode_attention_flops_per_context_token, 2.0 * 61 * 128 * (2 * 512 + 64));
  EXPECT_DOUBLE_EQ(r.attention_flops_per_context_token, 2.0 * 61 * 128 * (192 + 128));
  EXPECT_NEAR(r.attention_flops_per_s, 989e12 * o.engine.compute_efficiency * 8, 1);
  EXPECT_NEAR(r.flops_per_s, 1979e12 * o.engine.compute_efficiency * 8, 1);
  // With an FP8 cache the attention runs at the FP8 roof.
  o.kv_dtype = "fp8";
  EXPECT_NEAR(make_roofline(gpu, model, o).attention_flops_per_s, r.flops_per_s, 1);
}

// A GQA model's KV heads split across the GPUs while there are enough of them: Llama 3.3 70B's 8
// at TP 8 are one a GPU; at TP 16 each head is held by two GPUs, so the replica's cache per token
// doubles.
TEST(ServerModel, KvHeadsFewerThanTheGpusAreHeldTwice) {
  const auto model = load_model("llama-3.3-70b", kProfiles);
  const auto gpu = load_gpu("h200", kProfiles);
  ServingOptions o;
  o.tp = 8;
  EXPECT_DOUBLE_EQ(make_roofline(gpu, model, o).kv_bytes_per_token, 2.0 * 80 * 8 * 128 * 2);
  o.tp = 16;
  EXPECT_DOUBLE_EQ(make_roofline(gpu, model, o).kv_bytes_per_token, 2 * 2.0 * 80 * 8 * 128 * 2);
}

}  // namespace
}  // namespace overhead::cost
