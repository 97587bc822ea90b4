// GPU, model and price profiles: the data files under data/profiles/, each figure with its value,
// kind (measured, published or estimated), source and date, so every output can say where a number
// came from.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace overhead::cost {

struct CostError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Figure {
  double value = 0;
  std::string kind;  // measured | published | estimated
  std::string source;
  std::string date;
};

struct GpuProfile {
  std::string name, description;
  Figure memory_gb, bandwidth_gb_per_s, peak_tflops;  // peak_tflops: dense BF16
  // The memory the device reports (nvidia-smi's memory.total, in MiB): what an engine's memory
  // fraction multiplies. A datasheet's "80 GB" is HBM counted in binary units (80 GiB: the A100
  // reports 81920 MiB; the H100 81559 MiB once the driver's share is out), not 80e9 bytes; value
  // 0 when the profile gives none (then memory_gb x 1e9).
  Figure device_memory_mib;
  // Bytes one GPU holds: device_memory_mib when given, else memory_gb.
  double memory_bytes() const;
  // Dense peaks at lower precisions; value 0 when the GPU has no such tensor cores (A100: no FP8).
  Figure peak_fp8_tflops, peak_fp4_tflops;
  // The GPU-to-GPU link one tensor-parallel all-reduce crosses: bandwidth per direction, and the
  // latency of one all-reduce. Value 0 when the profile gives none (then --tp 1 only).
  Figure interconnect_gb_per_s, allreduce_latency_us;
  // Whether every GPU of the node reaches every other over its own links (NVSwitch, AMD's
  // Infinity Fabric mesh): value 1, and the engines' one- and two-shot all-reduce kernels replace
  // the ring for small payloads (Roofline::full_mesh); 0 when absent (PCIe cards: the ring).
  Figure interconnect_full_mesh;
  // The share of the dense BF16 peak a measured large matmul reaches on this GPU and its software
  // (the Maximum Achievable Matmul FLOPS over the peak); value 0 when no measurement is cited.
  // The calibrated compute efficiency is of the fitted GPUs' share (EngineParams), so a GPU that
  // reaches less of its peak runs compute at that much less (make_roofline).
  Figure matmul_achievable_share;
  // Optional per-GPU overrides of the calibrated efficiencies (data/calibration/engine.json);
  // value 0 when absent.
  Figure compute_efficiency, bandwidth_efficiency;
  // The dense peak for a weights precision ("bf16", "fp8", "fp4") in TFLOP/s: a precision the GPU
  // has no tensor cores for runs at the next wider one it has (weight-only quantization).
  double peak_for(const std::string& precision) const;
};

// A transformer's architecture as its config.json gives it; parameters and KV bytes are derived
// from it (derived_parameters) and checked against the published count when the profile loads.
struct Architecture {
  int layers = 0, hidden_size = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate_size = 0;
  int vocab_size = 0, experts = 1, experts_per_token = 1;
  bool tied_embeddings = false;
  // DeepSeek-style MoE: experts every token runs besides the routed ones, and leading layers whose
  // MLP is dense (of dense_intermediate_size) rather than experts. 0 when absent.
  int shared_experts = 0, dense_layers = 0, dense_intermediate_size = 0;
  // Multi-head latent attention (MLA): queries and keys/values through low-rank projections, and
  // the cache holds one latent of kv_lora_rank plus the rotary part per token and layer. head_dim
  // is then the query/key head (no-rope + rope part), v_head_dim the value head. 0 when absent.
  int q_lora_rank = 0, kv_lora_rank = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  double embedding_parameters() const;   // input embedding + LM head (once if tied)
  double attention_parameters() const;   // all layers: Q, K, V, O projections
  double expert_parameters() const;      // all layers: the gated MLPs of every routed expert (or the dense MLP)
  double always_on_mlp_parameters() const;  // the shared experts and the leading dense layers' MLPs
  double parameters() const;             // the total
  double active_parameters() const;      // what one token runs through (experts_per_token MLPs)
  // K and V of every layer for one token at `bytes` per element.
  double kv_bytes_per_token(double bytes) const;
  // The KV heads the cache holds: kv_heads, or 1 under MLA, whose latent every query head shares.
  // Tensor parallelism splits the heads, so each GPU keeps whole copies of at least one: MLA's
  // latent is held in full by every GPU (the KV cache duplicated tp times, the reason SGLang adds
  // data-parallel attention for DeepSeek), a GQA head by tp / kv_heads of them when tp > kv_heads.
  int cached_kv_heads() const;
  // MLA's down projections (q_a_proj, kv_a_proj_with_mqa): ReplicatedLinear in vLLM's and
  // SGLang's deepseek_v2.py, so every GPU of a tensor-parallel replica holds and runs them whole.
  // 0 without MLA.
  double replicated_attention_parameters() const;
  // Attention FLOPs per query token and context token (all layers): Q.K^T and P.V, 2 FLOPs a
  // multiply-add. A prompt's attention runs head by head (4 x heads x head_dim; under MLA the
  // latent expanded: 2 x heads x (qk head + v head)); a decode's under MLA runs on the latent with
  // the up projections absorbed into the query and the output (2 x heads x (kv_lora_rank + rope)
  // + 2 x heads x kv_lora_rank), the data-movement-friendly path vLLM's and SGLang's MLA backends
  // take for decodes (vLLM v1/attention/backends/mla/common.py; DeepSeek-V2 paper, arXiv 2405.04434, section 2.1.2).
  double prefill_attention_flops_per_context_token() const;
  double decode_attention_flops_per_context_token() const;
};

struct ModelProfile {
  std::string name, description;
  Figure parameters, active_parameters;  // published; checked against the architecture
  Architecture arch;
  std::string precision = "bf16";        // the weights as the profile's checkpoint ships them
  Figure max_concurrency;                // optional engine cap override; value 0 when absent
  // Kept for the tables that print them: 2 bytes per parameter of BF16 and the BF16 KV per token.
  Figure bytes_per_parameter, kv_bytes_per_token;
};

// Bytes per element of a weights or KV precision name; throws CostError naming `flag` otherwise.
double precision_bytes(const std::string& precision, const char* flag);

struct InstancePrice {
  double usd_per_hour = 0;
  double vcpus = 0;  // a CPU instance's vCPUs (its price per vCPU: usd_per_hour / vcpus); 0: not given
  std::string kind, source, date;
};
struct ApiPrice {
  double usd_per_1m_input = 0, usd_per_1m_output = 0;
  std::string kind, source, date;
};
struct Prices {
  std::map<std::string, InstancePrice> instances;
  std::map<std::string, ApiPrice> apis;
};

// `name_or_file`: a shipped short name (data/profiles/gpu/NAME.json) or a path to a JSON file.
// Errors name the file and the missing or malformed field.
GpuProfile load_gpu(const std::string& name_or_file, const std::filesystem::path& profiles_dir);
ModelProfile load_model(const std::string& name_or_file, const std::filesystem::path& profiles_dir);
Prices load_prices(const std::filesystem::path& file);

// A model name that shares a shipped profile's architecture (data/profiles/aliases.json, each
// with the config.json files that show it): load_model gives that profile under the alias's name.
struct ModelAlias {
  std::string profile, source;
};
std::map<std::string, ModelAlias> load_model_aliases(const std::filesystem::path& profiles_dir);

// Shipped profile names of one kind ("gpu" or "model"), sorted.
std::vector<std::string> list_profiles(const std::filesystem::path& profiles_dir, const std::string& kind);

}  // namespace overhead::cost
