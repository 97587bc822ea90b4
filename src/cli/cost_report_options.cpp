#include "cli/cost_report_options.hpp"

#include <string>

namespace overhead::cli {

void add_cost_report_options(CLI::App& cmd, const std::shared_ptr<report::CostSectionOptions>& o) {
  o->profiles_dir = std::string(OVERHEAD_DEFAULT_DATA_DIR) + "/profiles";
  const char* group = "Cost section (with --gpu and --model)";
  cmd.add_option("--gpu", o->gpu, "GPU profile name or JSON file: adds the cost section to the report")->group(group);
  cmd.add_option("--model", o->model, "Model profile name or JSON file")->group(group);
  cmd.add_option("--gpus", o->gpus, "GPUs per model replica")->capture_default_str()->group(group);
  cmd.add_option("--utilization", o->utilization, "Share of the replica's capacity in use, (0, 1]")
      ->capture_default_str()->group(group);
  cmd.add_option("--api-price", o->api_prices, "API price(s): a preset name or IN_PER_1M,OUT_PER_1M (repeatable)")
      ->group(group);
  cmd.add_option("--cost-workload", o->workload, "Tokens per request: in=N,out=M")->capture_default_str()->group(group);
  cmd.add_option("--cost-case", o->case_number, "Case whose E fit prices the requests")->capture_default_str()->group(group);
  cmd.add_option("--cost-tokenizer", o->tokenizer, "Tokenizer whose E fit to use (default: the first of the case)")
      ->group(group);
  cmd.add_option("--gpu-usd-per-hour", o->gpu_usd_per_hour, "Price of one GPU (default: the preset)")->group(group);
  cmd.add_option("--cpu-usd-per-hour", o->cpu_usd_per_hour, "Price of one CPU worker (default: m7i.large)")->group(group);
  cmd.add_option("--profiles", o->profiles_dir, "Folder of profiles")->capture_default_str()->group(group);
}

std::optional<report::SectionMaker> cost_report_section(const report::CostSectionOptions& o) {
  if (o.gpu.empty() && o.model.empty()) return std::nullopt;
  if (o.gpu.empty() || o.model.empty()) throw cost::CostError("the cost section needs both --gpu and --model");
  return report::cost_section_maker(o);
}

}  // namespace overhead::cli
