#include "cli/cost_command_serving.hpp"

#include "cli/option_checks.hpp"
#include "cost/cost_model.hpp"

namespace overhead::cli {

void add_serving_flags(CLI::App& cmd, ServingFlags& f) {
  cmd.add_option("--gpu", f.gpu, "GPU profile name or JSON file");
  cmd.add_option("--model", f.model, "Model profile name or JSON file");
  cmd.add_option("--gpus", f.gpus, "GPUs in the fleet (replicas = gpus / tp)")->check(integer_in(1, 100000))->capture_default_str();
  cmd.add_option("--tp", f.tp, "Tensor-parallel GPUs per replica (default: all of --gpus, one replica)")->check(integer_in(1, 1024));
  cmd.add_option("--precision", f.precision, "Weights precision: bf16, fp8 or fp4 (default: the model profile's)")
      ->check(CLI::IsMember({"bf16", "fp8", "fp4"}));
  cmd.add_option("--kv-dtype", f.kv_dtype, "KV cache precision: bf16 or fp8")->check(CLI::IsMember({"bf16", "fp8"}))->capture_default_str();
  cmd.add_option("--engine", f.engine_file, "Engine parameters file (default: data/calibration/engine.json, the fit)");
  cmd.add_option("--engine-profile", f.engine_profile,
                 "A profile written by `overhead calibrate`: the measured engine in place of --gpu and --model (--gpus counts "
                 "replicas; price from --gpu-usd-per-hour or --instance)");
  cmd.add_option("--instance", f.instance, "With --engine-profile: price one replica as this instance preset (see --list)");
  cmd.add_option("--max-batch", f.max_batch, "The engine's cap on running sequences per replica (default: the engine file's)")
      ->check(number_in(1, 1e6));
  cmd.add_option("--prefill-chunk", f.prefill_chunk, "The engine's prefill-token budget per step (default: the engine file's)")
      ->check(number_in(1, 1e7));
  cmd.add_option("--memory-fraction", f.memory_fraction, "Share of the memory the weights leave that holds KV (default: the engine file's)")
      ->check(number_in(0.01, 1));
  cmd.add_option("--gpu-usd-per-hour", f.gpu_usd_per_hour, "Price of one GPU (default: the preset)")->check(number_in(0, 1e6));
  cmd.add_option("--cpu-usd-per-hour", f.cpu_usd_per_hour, "Price of one CPU worker (default: m7i.large preset)")->check(number_in(0, 1e6));
}

cost::ScenarioSpec scenario_spec(const ServingFlags& f, const std::string& profiles_dir) {
  cost::ScenarioSpec s;
  s.profiles_dir = profiles_dir;
  s.gpu = f.gpu;
  s.model = f.model;
  s.gpus = f.gpus;
  s.tp = f.tp;
  s.precision = f.precision;
  s.kv_dtype = f.kv_dtype;
  s.engine_file = f.engine_file;
  s.engine_profile = f.engine_profile;
  s.instance = f.instance;
  s.max_batch = f.max_batch;
  s.prefill_chunk_tokens = f.prefill_chunk;
  s.memory_fraction = f.memory_fraction;
  s.gpu_usd_per_hour = f.gpu_usd_per_hour;
  s.cpu_usd_per_hour = f.cpu_usd_per_hour;
  return s;
}

CLI::Validator number_pair_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          cost::parse_number_pair(text, "value");
          return "";
        } catch (const cost::CostError&) {
          return "expected exactly two finite numbers A,B, got '" + text + "'";
        }
      },
      "A,B", "number pair");
}

nlohmann::json engine_json(const cost::EngineParams& e, const cost::Roofline& replica) {
  return {{"origin", e.origin},
          {"bandwidth_efficiency", e.bandwidth_efficiency},
          {"compute_efficiency", e.compute_efficiency},
          {"step_overhead_s", e.step_overhead_s},
          {"sequence_overhead_s", e.sequence_overhead_s},
          {"allreduce_latency_s", replica.allreduce_latency_s},
          {"memory_fraction", replica.memory_fraction},
          {"max_batch", replica.max_concurrency},
          {"prefill_chunk_tokens", replica.prefill_chunk_tokens},
          {"kv_capacity_tokens", cost::kv_capacity_tokens(replica)}};
}

}  // namespace overhead::cli
