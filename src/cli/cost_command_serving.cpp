#include "cli/cost_command_serving.hpp"

#include <string>

#include "cli/option_checks.hpp"
#include "cost/cost_model.hpp"

namespace overhead::cli {

void add_serving_flags(CLI::App& cmd, cost::ScenarioSpec& f) {
  if (f.profiles_dir.empty()) f.profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  cmd.add_option("--gpu", f.gpu, "GPU profile name or JSON file");
  cmd.add_option("--model", f.model, "Model profile name or JSON file");
  cmd.add_option("--gpus", f.gpus, "GPUs in the fleet (replicas = gpus / tp)")->check(integer_in(1, 100000))->capture_default_str();
  cmd.add_option("--tp", f.tp, "Tensor-parallel GPUs per replica (default: all of --gpus, one replica)")->check(integer_in(1, 1024));
  cmd.add_option("--precision", f.precision, "Weights precision: bf16, fp8 or fp4 (default: the model profile's)")
      ->check(CLI::IsMember({"bf16", "fp8", "fp4"}));
  cmd.add_option("--kv-dtype", f.kv_dtype, "KV cache precision: bf16 or fp8 (default: fp8 with --precision fp8 or fp4, else bf16)")->check(CLI::IsMember({"bf16", "fp8"}));
  cmd.add_option("--engine", f.engine_file, "Engine parameters file (default: data/calibration/engine.json, the fit)");
  cmd.add_option("--engine-profile", f.engine_profile,
                 "A profile written by `overhead calibrate`: the measured engine in place of --gpu and --model (--gpus counts "
                 "replicas; price from --gpu-usd-per-hour or --instance)");
  cmd.add_option("--engine-preset", f.engine_preset,
                 "The serving engine's own defaults: vllm, sglang, trtllm or llamacpp, optionally @VERSION (vllm@v1, "
                 "sglang@v0.4, trtllm@1.0, llamacpp@server; data/engines/, each value with its source), at the efficiency "
                 "factor fitted on that engine's published results (data/calibration/engine_factors.json; none with --engine); "
                 "--max-batch, --prefill-chunk, --memory-fraction and --scheduler-steps override it");
  cmd.add_option("--scheduler-steps", f.scheduler_steps,
                 "Decode steps scheduled at once (vLLM's --num-scheduler-steps): tokens reach the client in bursts")
      ->check(number_in(1, 1024));
  cmd.add_option("--instance", f.instance, "With --engine-profile: price one replica as this instance preset (see --list)");
  cmd.add_option("--max-batch", f.max_batch, "The engine's cap on running sequences per replica (default: the engine file's)")
      ->check(number_in(1, 1e6));
  cmd.add_option("--prefill-chunk", f.prefill_chunk_tokens, "The engine's prefill-token budget per step (default: the engine file's)")
      ->check(number_in(1, 1e7));
  cmd.add_option("--memory-fraction", f.memory_fraction, "Share of the memory the weights leave that holds KV (default: the engine file's)")
      ->check(number_in(0.01, 1));
  cmd.add_option("--gpu-usd-per-hour", f.gpu_usd_per_hour, "Price of one GPU (default: the preset)")->check(number_in(0, 1e6));
  cmd.add_option("--cpu-usd-per-hour", f.cpu_usd_per_hour, "Price of one CPU worker (default: m7i.large preset)")->check(number_in(0, 1e6));
  cmd.add_option("--profiles", f.profiles_dir, "Folder of profiles")->capture_default_str();
}

void add_load_flags(CLI::App& cmd, cost::LoadSpec& load, const std::string& group) {
  cmd.add_option("--utilization", load.utilization, "Share of the fleet's capacity in use, (0, 1] (the default load)")
      ->check(number_in(1e-9, 1))->capture_default_str()->group(group)
      ->each([&load](const std::string&) { load.mode = cost::Load::utilization; });
  cmd.add_flag_callback("--max-throughput", [&load] { load.mode = cost::Load::max_throughput; },
                        "Price the fleet at its capacity: every replica at its batch limit")->group(group);
  cmd.add_option("--concurrency", load.concurrency,
                 "Price the fleet with this many requests in flight (clients that send their next when one ends)")
      ->check(number_in(1, 1e7))->group(group)->each([&load](const std::string&) { load.mode = cost::Load::concurrency; });
  cmd.add_flag("--in-step", load.in_step,
               "With --concurrency: the clients start together, as a fixed-batch benchmark runs (simulated)")->group(group);
  cmd.add_option("--rate", load.rate, "Price the fleet under Poisson arrivals at this many requests/s (open loop)")
      ->check(number_in(1e-9, 1e9))->group(group)->each([&load](const std::string&) { load.mode = cost::Load::rate; });
  cmd.add_option_function<std::size_t>(
         "--offline", [&load](const std::size_t& n) { load.mode = cost::Load::offline; load.requests = n; },
         "Price an offline benchmark: N requests all sent at once, simulated, every output token over the whole run")
      ->check(integer_in(1, 10'000'000))->group(group);
  add_max_rate_flags(cmd, load, group);
}

void add_max_rate_flags(CLI::App& cmd, cost::LoadSpec& load, const std::string& group) {
  cmd.add_flag_callback("--max-rate", [&load] { load.mode = cost::Load::max_rate; },
                        "Find the highest Poisson rate whose TTFT and TPOT p99 meet --ttft-p99-ms and --tpot-p99-ms, and price it")
      ->group(group);
  cmd.add_option("--ttft-p99-ms", load.targets.ttft_p99_ms, "With --max-rate: the TTFT p99 target")
      ->check(number_in(1e-6, 1e9))->group(group);
  cmd.add_option("--tpot-p99-ms", load.targets.tpot_p99_ms, "With --max-rate: the TPOT p99 target")
      ->check(number_in(1e-6, 1e9))->group(group);
}

std::size_t load_modes_given(const CLI::App& cmd) {
  std::size_t n = 0;
  for (const char* flag : {"--utilization", "--max-throughput", "--concurrency", "--rate", "--offline", "--max-rate"})
    if (const CLI::Option* option = cmd.get_option_no_throw(flag); option && option->count() > 0) ++n;
  return n;
}

void add_e_flags(CLI::App& cmd, std::vector<std::string>& fits, std::string& backend, int& case_number,
                 std::string& tokenizer, std::string& e_us) {
  cmd.add_option("--fits", fits,
                 "fits.json from `overhead analyze` (E = alpha + beta*tokens); repeat once per backend with --backend");
  cmd.add_option("--backend", backend,
                 "With several --fits: the backend whose fit to use (the fits.json's store scheme: sqlite, postgres, ...)");
  cmd.add_option("--case", case_number, "Case whose E fit to use")->check(integer_in(0, 1000))->capture_default_str();
  cmd.add_option("--tokenizer", tokenizer, "Tokenizer whose E fit to use (default: the first of the case)");
  cmd.add_option("--e-us", e_us, "E typed in: ALPHA,BETA in microseconds (alpha + beta*input tokens)")
      ->check(number_pair_check());
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
          {"preset", e.preset},
          {"memory_fraction_of", replica.memory_of_total ? "total" : "free"},
          {"scheduler_steps", replica.scheduler_steps},
          {"prefix_caching", e.prefix_caching},
          {"cuda_graph_max_batch", e.cuda_graph_max_batch},
          {"bandwidth_efficiency", e.bandwidth_efficiency},
          {"compute_efficiency", e.compute_efficiency},
          {"efficiency_factor", e.efficiency_factor},
          {"step_overhead_s", e.step_overhead_s},
          {"sequence_overhead_s", e.sequence_overhead_s},
          {"allreduce_latency_s", replica.allreduce_latency_s},
          {"memory_fraction", replica.memory_fraction},
          {"max_batch", replica.max_concurrency},
          {"prefill_chunk_tokens", replica.prefill_chunk_tokens},
          {"kv_capacity_tokens", cost::kv_capacity_tokens(replica)}};
}

nlohmann::json preset_json(const cost::EnginePreset& p) {
  if (p.name.empty()) return nullptr;
  nlohmann::json settings = nlohmann::json::object();
  for (const auto& s : p.settings) settings[s.name] = {{"value", s.value}, {"source", s.source}};
  return {{"name", p.name}, {"version", p.version}, {"read_in", p.note}, {"settings", settings}};
}

std::string preset_line(const cost::EnginePreset& p) {
  if (p.name.empty()) return "";
  std::string line = "engine preset " + p.name + "@" + p.version + ":";
  for (const auto& s : p.settings)
    if (s.name != "chunked_prefill") line += " " + s.name + " " + s.value + ";";
  line.back() = '\n';
  return line;
}

nlohmann::json percentiles_json(const cost::Percentiles& p) {
  return {{"mean", p.mean}, {"p50", p.p50}, {"p95", p.p95}, {"p99", p.p99}};
}

}  // namespace overhead::cli
