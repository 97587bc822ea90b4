#include "cost/engine_preset.hpp"

#include <algorithm>
#include <cstdio>

#include "cost/json_file.hpp"
#include "cost/profiles.hpp"

namespace overhead::cost {
namespace {

constexpr double kNoBatchCap = 1e6;  // the most EngineParams takes: only the KV memory bounds the batch

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// A setting's value for the target: its "value", or the GPU's entry of "by_gpu", or the first
// "by_tp_at_least" [tp, value] the replica's TP reaches, or "below_memory_gb" [GB, value].
double resolved(const nlohmann::json& s, const PresetTarget& t) {
  double v = s.at("value").get<double>();
  if (s.contains("by_gpu") && s["by_gpu"].contains(t.gpu)) v = s["by_gpu"][t.gpu].get<double>();
  if (s.contains("by_tp_at_least"))
    for (const auto& rule : s["by_tp_at_least"])
      if (t.tp >= rule.at(0).get<int>()) {
        v = rule.at(1).get<double>();
        break;
      }
  if (s.contains("below_memory_gb") && t.gpu_memory_gb < s["below_memory_gb"].at(0).get<double>())
    v = s["below_memory_gb"].at(1).get<double>();
  return v;
}

const nlohmann::json& setting(const nlohmann::json& version, const char* key, const std::filesystem::path& file) {
  if (!version.contains(key) || !version[key].is_object() || !version[key].contains("source") ||
      !version[key]["source"].is_string() || version[key]["source"].get<std::string>().empty())
    throw CostError(file.string() + ": setting \"" + key + "\" needs an object with its \"source\"");
  return version[key];
}

}  // namespace

std::filesystem::path default_engines_dir(const std::filesystem::path& profiles_dir) { return data_dir_beside(profiles_dir, "engines"); }

std::vector<std::string> list_engine_presets(const std::filesystem::path& engines_dir) { return json_file_names(engines_dir); }

EnginePreset apply_engine_preset(const std::string& name_at_version, const std::filesystem::path& engines_dir,
                                 const PresetTarget& target, EngineParams& engine) {
  const auto at = name_at_version.find('@');
  EnginePreset p;
  p.name = name_at_version.substr(0, at);
  const auto file = engines_dir / (p.name + ".json");
  if (!std::filesystem::exists(file)) {
    std::string known;
    for (const auto& n : list_engine_presets(engines_dir)) known += (known.empty() ? "" : ", ") + n;
    throw CostError("--engine-preset " + name_at_version + ": no such engine (known: " + known + ")");
  }
  const auto j = read_json_file(file);
  p.version = at == std::string::npos ? j.value("default_version", "") : name_at_version.substr(at + 1);
  if (!j.contains("versions") || !j["versions"].contains(p.version)) {
    std::string known;
    if (j.contains("versions"))
      for (const auto& [v, unused] : j["versions"].items()) known += (known.empty() ? "" : ", ") + v;
    throw CostError("--engine-preset " + name_at_version + ": no version \"" + p.version + "\" of " + p.name +
                    " (known: " + known + ")");
  }
  p.note = j.value("note", "");
  const auto& v = j["versions"][p.version];
  try {
    const auto& batch = setting(v, "max_batch", file);
    // No cap by count (SGLang): the KV memory bounds the batch alone.
    engine.max_batch = batch.value("unbounded", false) ? kNoBatchCap : resolved(batch, target);
    const auto& memory = setting(v, "memory_fraction", file);
    engine.memory_fraction = resolved(memory, target);
    engine.memory_of_total = memory.value("of", "free") == "total";
    const auto& chunk = setting(v, "prefill_chunk_tokens", file);
    engine.prefill_chunk_tokens = resolved(chunk, target);
    const auto& steps = setting(v, "scheduler_steps", file);
    engine.scheduler_steps = std::max(1.0, resolved(steps, target));
    const auto& prefix = setting(v, "prefix_caching", file);
    engine.prefix_caching = prefix.at("value").get<bool>();
    const auto& graphs = setting(v, "cuda_graph_max_batch", file);
    engine.cuda_graph_max_batch = resolved(graphs, target);
    // What the engine reserves of a request's KV at admission, and what its prefill budget counts:
    // optional, the base model's (the whole output reserved, a budget of prompt tokens) when a
    // preset does not state them.
    const nlohmann::json absent = {{"value", 1}, {"source", "not stated in this preset: the base model's (the whole output reserved at admission)"}};
    const auto& reservation = v.contains("kv_output_reserved") ? setting(v, "kv_output_reserved", file) : absent;
    engine.output_reserved = std::clamp(resolved(reservation, target), 0.0, 1.0);
    // SGLang's share adapts: {"floor", "decay_steps", "headroom_steps"}.
    engine.reserve_adapts = reservation.contains("adapts");
    if (engine.reserve_adapts) {
      const auto& a = reservation["adapts"];
      engine.reserve_floor = a.at("floor").get<double>();
      engine.reserve_decay_steps = a.at("decay_steps").get<double>();
      engine.retract_headroom_steps = a.at("headroom_steps").get<double>();
    }
    const nlohmann::json prompts_only = {{"value", false}, {"source", "not stated in this preset: the base model's (the budget is of prompt tokens)"}};
    const auto& shared = v.contains("decodes_share_budget") ? setting(v, "decodes_share_budget", file) : prompts_only;
    engine.decodes_share_budget = shared.at("value").get<bool>();
    const auto& policy = setting(v, "chunked_prefill", file);
    const nlohmann::json ring_only = {{"value", 0}, {"source", "not stated in this preset: the base model's (every all-reduce a ring)"}};
    const auto& allreduce = v.contains("custom_allreduce_max_mib") ? setting(v, "custom_allreduce_max_mib", file) : ring_only;
    engine.custom_allreduce_max_bytes = allreduce.at("value").get<double>() * 1024 * 1024;
    p.settings = {
        {"max_batch", engine.max_batch >= kNoBatchCap ? "none (the KV memory's)" : engine.max_batch > 0 ? number_text(engine.max_batch) : "the deployment's (--max-batch)", batch["source"]},
        {"memory_fraction", number_text(engine.memory_fraction) + (engine.memory_of_total ? " of the whole memory" : " of what the weights leave"), memory["source"]},
        {"prefill_chunk_tokens", number_text(engine.prefill_chunk_tokens), chunk["source"]},
        {"chunked_prefill", policy.value("policy", ""), policy["source"]},
        {"scheduler_steps", number_text(engine.scheduler_steps), steps["source"]},
        {"prefix_caching", engine.prefix_caching ? "on" : "off", prefix["source"]},
        {"cuda_graph_max_batch", number_text(engine.cuda_graph_max_batch), graphs["source"]},
        {"kv_output_reserved", number_text(engine.output_reserved) + (engine.reserve_adapts ? " of the output at first, falling to " + number_text(engine.reserve_floor) + "; raised after a retraction" : engine.output_reserved >= 1 ? " (the whole output, at admission)" : engine.output_reserved <= 0 ? " (allocated as produced; the last admitted preempted when full)" : " of the output at admission"), reservation["source"]},
        {"decodes_share_budget", engine.decodes_share_budget ? "yes (decodes and prompt chunks in one token budget)" : "no (the budget is of prompt tokens)", shared["source"]},
        {"custom_allreduce", engine.custom_allreduce_max_bytes > 0 ? "up to " + number_text(engine.custom_allreduce_max_bytes / (1024 * 1024)) + " MiB on a full mesh of 2, 4, 6 or 8 GPUs (one- or two-shot), a ring past it" : "none (every all-reduce a ring)", allreduce["source"]}};
  } catch (const nlohmann::json::exception& e) {
    throw CostError(file.string() + ": version " + p.version + ": " + e.what());
  }
  if (!(engine.memory_fraction > 0 && engine.memory_fraction <= 1) || !(engine.prefill_chunk_tokens >= 1) ||
      !(engine.max_batch >= 0) || !(engine.custom_allreduce_max_bytes >= 0))
    throw CostError(file.string() + ": version " + p.version + ": a value out of range");
  engine.preset = p.name + "@" + p.version;
  engine.origin += ", engine preset " + engine.preset + " (" + file.string() + ")";
  return p;
}

}  // namespace overhead::cost
