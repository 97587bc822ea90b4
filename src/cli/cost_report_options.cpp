#include "cli/cost_report_options.hpp"

#include <string>

#include "cli/cost_command_serving.hpp"
#include "cli/option_checks.hpp"

namespace overhead::cli {

void add_cost_report_options(CLI::App& cmd, const std::shared_ptr<report::CostSectionOptions>& o) {
  cost::ScenarioSpec& spec = o->pricing.scenario;
  spec.profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  const std::string group = "Cost section (with --gpu and --model)";
  cmd.add_option("--gpu", spec.gpu, "GPU profile name or JSON file: adds the cost section to the report")->group(group);
  cmd.add_option("--model", spec.model, "Model profile name or JSON file")->group(group);
  cmd.add_option("--gpus", spec.gpus, "GPUs in the fleet (replicas = gpus / tp)")->check(integer_in(1, 100000))
      ->capture_default_str()->group(group);
  cmd.add_option("--tp", spec.tp, "Tensor-parallel GPUs per replica (default: all of --gpus)")->check(integer_in(1, 1024))->group(group);
  cmd.add_option("--precision", spec.precision, "Weights precision: bf16, fp8 or fp4 (default: the model profile's)")
      ->check(CLI::IsMember({"bf16", "fp8", "fp4"}))->group(group);
  cmd.add_option("--kv-dtype", spec.kv_dtype, "KV cache precision: bf16 or fp8 (default: fp8 with --precision fp8 or fp4, else bf16)")
      ->check(CLI::IsMember({"bf16", "fp8"}))->group(group);
  // The same load flags as `overhead cost`, into the same struct.
  add_load_flags(cmd, o->pricing.load, group);
  cmd.add_option("--api-price", o->pricing.api_prices, "API price(s): a preset name or IN_PER_1M,OUT_PER_1M (repeatable)")
      ->group(group);
  cmd.add_option("--cost-workload", o->pricing.workload, "Tokens per request: in=N,out=M")->capture_default_str()->group(group);
  cmd.add_option("--cost-case", o->case_number, "Case whose E fit prices the requests")->capture_default_str()->group(group);
  cmd.add_option("--cost-tokenizer", o->tokenizer, "Tokenizer whose E fit to use (default: the first of the case)")
      ->group(group);
  cmd.add_option("--gpu-usd-per-hour", spec.gpu_usd_per_hour, "Price of one GPU (default: the preset)")
      ->check(number_in(0, 1e6))->group(group);
  cmd.add_option("--cpu-usd-per-hour", spec.cpu_usd_per_hour, "Price of one CPU worker (default: m7i.large)")
      ->check(number_in(0, 1e6))->group(group);
  cmd.add_option("--profiles", spec.profiles_dir, "Folder of profiles")->capture_default_str()->group(group);
}

std::optional<report::SectionMaker> cost_report_section(const report::CostSectionOptions& o) {
  const cost::ScenarioSpec& spec = o.pricing.scenario;
  if (spec.gpu.empty() && spec.model.empty()) return std::nullopt;
  if (spec.gpu.empty() || spec.model.empty()) throw cost::CostError("the cost section needs both --gpu and --model");
  return report::cost_section_maker(o);
}

}  // namespace overhead::cli
