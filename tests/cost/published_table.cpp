#include "published_table.hpp"

#include <fstream>

#include "cost/engine_preset.hpp"
#include "cost/engine_sim.hpp"
#include "cost/json_file.hpp"
#include "cost/length_distribution.hpp"
#include "cost/scenario.hpp"

#include <algorithm>

namespace overhead::cost {
namespace {

// One CSV line into fields ("a,\"b, c\",d"); quotes doubled inside quoted fields.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        out.back() += ch;
      }
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      out.emplace_back();
    } else if (ch != '\r') {
      out.back() += ch;
    }
  }
  return out;
}

// "max_batch=3200;prefill_chunk_tokens=16384" into its names and values; `where` names the line.
std::map<std::string, double> parse_settings(const std::string& text, const std::string& where) {
  std::map<std::string, double> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = std::min(text.find(';', begin), text.size());
    const std::string item = text.substr(begin, end - begin);
    begin = end + 1;
    const std::size_t eq = item.find('=');
    const std::string name = item.substr(0, eq);
    if (name != "max_batch" && name != "prefill_chunk_tokens" && name != "memory_fraction")
      throw CostError(where + ": settings: \"" + item + "\" is not max_batch=, prefill_chunk_tokens= or memory_fraction=");
    try {
      std::size_t used = 0;
      const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
      const double v = std::stod(value, &used);
      if (used != value.size() || !(v > 0)) throw std::invalid_argument(item);
      out[name] = v;
    } catch (const std::exception&) {
      throw CostError(where + ": settings: \"" + item + "\" has no positive number after =");
    }
  }
  return out;
}

}  // namespace

std::vector<CalibrationRow> load_calibration(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw CostError(file.string() + ": cannot open");
  std::string line;
  std::getline(in, line);
  const auto header = split_csv(line);
  std::vector<CalibrationRow> rows;
  std::size_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    const auto cells = split_csv(line);
    if (cells.size() != header.size())
      throw CostError(file.string() + ":" + std::to_string(number) + ": " + std::to_string(cells.size()) + " fields, the header has " +
                      std::to_string(header.size()));
    const auto has = [&](const std::string& name) { return std::find(header.begin(), header.end(), name) != header.end(); };
    auto get = [&](const std::string& name) -> const std::string& {
      for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return cells[i];
      throw CostError(file.string() + ": no column \"" + name + "\"");
    };
    auto number_of = [&](const std::string& name) {
      try {
        std::size_t used = 0;
        const double v = std::stod(get(name), &used);
        if (used != get(name).size() || !(v >= 0)) throw std::invalid_argument(name);
        return v;
      } catch (const std::exception&) {
        throw CostError(file.string() + ":" + std::to_string(number) + ": " + name + " is not a number: \"" + get(name) + "\"");
      }
    };
    CalibrationRow r;
    r.id = get("id");
    r.engine = get("engine");
    r.gpu = get("gpu");
    r.model = get("model");
    r.precision = get("precision");
    r.kv_dtype = get("kv_dtype");
    r.split = get("split");
    r.source = get("source");
    r.table = get("table");
    r.gpus = static_cast<int>(number_of("gpus"));
    r.tp = static_cast<int>(number_of("tp"));
    r.input_tokens = number_of("input_tokens");
    r.output_tokens = number_of("output_tokens");
    const std::string& load = get("concurrency");
    if (load.rfind("rate:", 0) == 0) {
      try {
        std::size_t used = 0;
        const double rate = std::stod(load.substr(5), &used);
        if (used != load.size() - 5 || !(rate > 0)) throw std::invalid_argument(load);
        r.request_rate = rate;
      } catch (const std::exception&) {
        throw CostError(file.string() + ":" + std::to_string(number) + ": concurrency \"" + load +
                        "\" is neither max, a number of clients, batch:N nor rate:R");
      }
      r.requests = number_of("requests");
    } else if (load.rfind("batch:", 0) == 0) {
      try {
        std::size_t used = 0;
        const double clients = std::stod(load.substr(6), &used);
        if (used != load.size() - 6 || !(clients >= 1)) throw std::invalid_argument(load);
        r.concurrency = clients;
        r.in_step = true;
      } catch (const std::exception&) {
        throw CostError(file.string() + ":" + std::to_string(number) + ": concurrency \"" + load + "\" is not batch:N");
      }
    } else if (load != "max") {
      r.concurrency = number_of("concurrency");
    } else {
      r.requests = number_of("requests");
    }
    r.output_tokens_per_s = number_of("output_tokens_per_s");
    if (!get("ttft_ms").empty()) r.ttft_ms = number_of("ttft_ms");
    if (!get("tpot_ms").empty()) r.tpot_ms = number_of("tpot_ms");
    if (has("lengths")) r.lengths = get("lengths");
    if (has("settings")) r.settings = parse_settings(get("settings"), file.string() + ":" + std::to_string(number));
    if (r.source.empty()) throw CostError(file.string() + ":" + std::to_string(number) + ": no source");
    if (r.split != "fit" && r.split != "held_out")
      throw CostError(file.string() + ":" + std::to_string(number) + ": split must be fit or held_out");
    rows.push_back(r);
  }
  return rows;
}

Prediction predict(const CalibrationRow& row, const EngineParams& engine, const std::filesystem::path& profiles_dir) {
  ScenarioSpec spec;
  spec.profiles_dir = profiles_dir;
  spec.gpu = row.gpu;
  spec.model = row.model;
  spec.gpus = row.gpus;
  spec.tp = row.tp;
  spec.precision = row.precision;
  spec.kv_dtype = row.kv_dtype;
  spec.gpu_usd_per_hour = 1;
  spec.cpu_usd_per_hour = 1;
  ServingOptions serving;
  serving.tp = row.tp;
  serving.precision = row.precision;
  serving.kv_dtype = row.kv_dtype;
  serving.engine = engine;
  const auto gpu = load_gpu(row.gpu, profiles_dir);
  const auto model = load_model(row.model, profiles_dir);
  const Roofline r = make_roofline(gpu, model, serving);
  const int replicas = row.gpus / row.tp;
  EngineSimConfig c;
  c.replica = r;
  c.replicas = replicas;
  c.closed_loop = true;
  c.workload = {{row.input_tokens, row.output_tokens}};
  if (row.concurrency) {
    c.concurrency = *row.concurrency;
    c.clients_in_step = row.in_step;
    c.requests = static_cast<std::size_t>(std::max(2000.0, 20 * *row.concurrency));
  } else if (row.request_rate) {
    c.closed_loop = false;
    c.arrival_rate = *row.request_rate;
    c.requests = static_cast<std::size_t>(row.requests);
  } else {
    c.concurrency = row.requests;
    c.requests = static_cast<std::size_t>(row.requests);
  }
  if (!row.lengths.empty()) {
    const auto law = load_length_distribution(row.lengths, default_workloads_dir(profiles_dir));
    if (!law) throw CostError(row.id + ": lengths \"" + row.lengths + "\" names no distribution in data/workloads/");
    const auto w = draw_workload(with_means(*law, row.input_tokens, row.output_tokens), c.requests, 1);
    c.workload.clear();
    for (std::size_t i = 0; i < w.input_tokens.size(); ++i) c.workload.push_back({w.input_tokens[i], w.output_tokens[i]});
  }
  const auto sim = simulate_engine(c);
  const double tokens_per_s = row.concurrency ? sim.output_tokens_per_s : sim.total_output_tokens_per_s;
  return {tokens_per_s, sim.ttft_s.mean * 1000, sim.tpot_s.mean * 1000};
}

std::string engine_family(const CalibrationRow& row) {
  for (const char* family : {"vllm", "sglang", "lmdeploy"})
    if (row.engine.rfind(family, 0) == 0) return family;
  return "";
}

EngineParams engine_for_row(const CalibrationRow& row, const EngineParams& base, double factor, const std::filesystem::path& data_dir) {
  const std::string family = engine_family(row);
  EngineParams e = base;
  if (!family.empty() && std::filesystem::exists(data_dir / "engines" / (family + ".json"))) {
    const auto gpu = load_gpu(row.gpu, data_dir / "profiles");
    apply_engine_preset(family, data_dir / "engines", {gpu.name, gpu.memory_gb.value, row.tp}, e);
  }
  for (const auto& [name, value] : row.settings) {
    if (name == "max_batch") e.max_batch = value;
    if (name == "prefill_chunk_tokens") e.prefill_chunk_tokens = value;
    if (name == "memory_fraction") e.memory_fraction = value;
  }
  if (family.empty()) return e;
  apply_engine_factor(e, factor, "the factor fitted or checked");
  return e;
}

}  // namespace overhead::cost
