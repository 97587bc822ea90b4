// `overhead calibrate --engine URL[,model=NAME] --tokenizer T --out PROFILE.json
// [--max-concurrency N] [--budget-s S]`: measures an OpenAI-compatible engine (calibrate_engine),
// fits the server model to it (cost/engine_profile) and writes the profile `cost` and `simulate`
// read with --engine-profile: the raw measurements, the fit and its residuals, the engine's
// /v1/models, the date and the host. Progress goes to stderr when it is a terminal; the summary
// table (measured against fitted) to stdout.
// `overhead calibrate --refit PROFILE.json --out NEW.json` fits a profile's stored measurements
// again (this version's fit, nothing measured) and writes the profile with the new fit.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/openai_decoder.hpp"
#include "cli/calibrate_engine.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "ports/backend_url.hpp"
#include "cost/json_file.hpp"
#include "cost/profiles.hpp"

namespace overhead::cli {

namespace {

constexpr int kDefaultBatchTokens = 2048;  // llama.cpp server's default n_batch

struct CalibrateOptions {
  std::string engine, tokenizer, out, refit;
  int max_concurrency = 8;
  double budget_s = 120;
};

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

void print_summary(const Calibration& c, const cost::EngineFit& fit) {
  std::printf("engine model %s: %zu prefill and %zu decode measurements in %.1f s\n", c.model.c_str(), c.prefill.size(),
              c.decode.size(), c.elapsed_s);
  std::printf("fit: TTFT = %.2f ms + %.4g ms x prompt + %.3g ms x prompt^2 (R^2 %.3f over %zu lengths)\n",
              fit.ttft_base_s * 1e3, fit.prefill_s_per_token * 1e3, fit.ttft_s_per_token_squared * 1e3, fit.prefill_r_squared,
              fit.prefill_points);
  std::printf("     step = %.3f ms + %.3f ms x batch + %.3g ms x batch x context (R^2 %.3f over %zu points)\n",
              fit.step_overhead_s * 1e3, fit.sequence_overhead_s * 1e3, fit.context_s_per_token * 1e3, fit.decode_r_squared,
              fit.decode_points);
  if (!fit.decode_levels.empty() && fit.decode_levels.levels.front().batch < 1.5)
    std::printf("     a lone sequence's step = %.3f ms + %.3g ms x context (its own measured line, from %zu lone decodes)\n",
                fit.decode_levels.levels.front().step_s * 1e3, fit.decode_levels.levels.front().s_per_context_token * 1e3,
                c.lone_decode.size());
  // The points the fit was made to (each one's interquartile mean), against the fit; the batch
  // and context of a decode point are its medians, as the fit takes them.
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  const auto mean = &cost::interquartile_mean;
  std::printf("\n%-8s %8s %14s %14s %8s\n", "prompt", "n", "TTFT ms", "fitted ms", "error");
  std::map<double, std::vector<double>> ttft;
  for (const auto& s : c.prefill) ttft[s.prompt_tokens].push_back(s.ttft_s);
  for (const auto& [len, v] : ttft) {
    const double m = mean(v), f = fit.ttft_s(len);
    std::printf("%-8.0f %8zu %14.2f %14.2f %7.1f%%\n", len, v.size(), m * 1e3, f * 1e3, 100 * (f - m) / m);
  }
  std::printf("\n%-8s %8s %8s %8s %14s %14s %8s\n", "sent", "batch", "context", "n", "TPOT ms", "fitted ms", "error");
  struct Group {
    std::vector<double> tpots, contexts, batches;
  };
  std::map<std::pair<double, double>, Group> tpot;
  for (const auto& s : c.decode) {
    auto& g = tpot[{s.level(), std::round(s.context_tokens / 16)}];  // as the fit groups them
    g.tpots.push_back(s.tpot_s);
    g.contexts.push_back(s.context_tokens);
    g.batches.push_back(s.batch);
  }
  for (const auto& [key, g] : tpot) {
    const double m = mean(g.tpots), ctx = median(g.contexts), batch = median(g.batches), f = fit.step_s(batch, ctx);
    std::printf("%-8.0f %8.2f %8.0f %8zu %14.3f %14.3f %7.1f%%\n", key.first, batch, ctx, g.tpots.size(), m * 1e3, f * 1e3,
                100 * (f - m) / m);
  }
  std::printf("\nrequests sent together wait through %.2f of the others' prefill steps\n", fit.queue_share);
  std::printf("%-8s %8s %8s %14s %14s %8s\n", "sent", "prompt", "n", "TTFT ms", "fitted ms", "error");
  std::map<std::pair<double, double>, std::vector<double>> together;
  for (const auto& s : c.concurrent) together[{s.concurrency, s.prompt_tokens}].push_back(s.ttft_s);
  for (const auto& [key, v] : together) {
    const double m = mean(v), f = fit.concurrent_ttft_s(key.first, key.second);
    std::printf("%-8.0f %8.0f %8zu %14.2f %14.2f %7.1f%%\n", key.first, key.second, v.size(), m * 1e3, f * 1e3,
                100 * (f - m) / m);
  }
}

// Fits the calibration, writes `profile` with the fit (or, when the fit fails, with "fit_error":
// the measurements stay readable) to `out`, and prints the summary. Throws when the fit fails.
void fit_and_write(const Calibration& c, nlohmann::json profile, const std::string& out_path) {
  std::optional<cost::EngineFit> fit;
  std::string fit_error;
  try {
    fit = cost::fit_engine(c.prefill, c.decode, c.concurrent, c.lone_decode);
  } catch (const cost::CostError& e) {
    fit_error = e.what();
  }
  profile.erase("fit");
  profile.erase("fit_error");
  if (fit) profile["fit"] = cost::engine_fit_json(*fit);
  else profile["fit_error"] = fit_error;
  std::ofstream out(out_path);
  out << profile.dump(2) << "\n";
  if (!out) throw std::runtime_error(out_path + ": cannot write");
  if (!fit) throw std::runtime_error(fit_error + " (the measurements are in " + out_path + ")");
  print_summary(c, *fit);
  std::printf("\nwrote %s\n", out_path.c_str());
}

// The measurements of a profile `calibrate` wrote (`j`, read from `file`), as the calibration that took them.
Calibration stored_calibration(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || !j.contains("measurements") || !j["measurements"].is_object())
    throw std::runtime_error(file + ": no \"measurements\" (not a profile written by overhead calibrate)");
  const auto& m = j["measurements"];
  const auto rows = [&](const char* name) {
    if (!m.contains(name) || !m[name].is_array()) throw std::runtime_error(file + ": measurements." + name + " must be an array");
    return m[name];
  };
  const auto number = [&](const nlohmann::json& row, const char* name, const char* list, std::size_t i) {
    if (!row.is_object() || !row.contains(name) || !row[name].is_number())
      throw std::runtime_error(file + ": measurements." + list + "[" + std::to_string(i) + "]." + name + " must be a number");
    return row[name].get<double>();
  };
  Calibration c;
  c.model = j.value("model", "");
  c.elapsed_s = j.value("elapsed_s", 0.0);
  const auto prefill = rows("prefill"), decode = rows("decode"), concurrent = rows("concurrent_ttft");
  for (std::size_t i = 0; i < prefill.size(); ++i)
    c.prefill.push_back({number(prefill[i], "prompt_tokens", "prefill", i), number(prefill[i], "ttft_s", "prefill", i)});
  for (std::size_t i = 0; i < decode.size(); ++i)
    c.decode.push_back({number(decode[i], "batch", "decode", i), number(decode[i], "context_tokens", "decode", i),
                        number(decode[i], "tpot_s", "decode", i), number(decode[i], "concurrency", "decode", i)});
  for (std::size_t i = 0; i < concurrent.size(); ++i)
    c.concurrent.push_back({number(concurrent[i], "concurrency", "concurrent_ttft", i),
                            number(concurrent[i], "prompt_tokens", "concurrent_ttft", i),
                            number(concurrent[i], "ttft_s", "concurrent_ttft", i)});
  // Profiles written before the lone prompts generated more than their first token have none.
  if (m.contains("lone_decode")) {
    const auto lone = rows("lone_decode");
    for (std::size_t i = 0; i < lone.size(); ++i)
      c.lone_decode.push_back({1, number(lone[i], "context_tokens", "lone_decode", i), number(lone[i], "tpot_s", "lone_decode", i), 1});
  }
  return c;
}

int run_refit(const CalibrateOptions& o) {
  try {
    const nlohmann::json profile = cost::read_json_file(o.refit);
    fit_and_write(stored_calibration(profile, o.refit), profile, o.out);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead calibrate: --refit: %s\n", e.what());
    return 1;
  }
}

int run_calibrate(const CalibrateOptions& o) {
  if (!o.refit.empty()) return run_refit(o);
  if (o.engine.empty() || o.tokenizer.empty()) {
    std::fprintf(stderr, "overhead calibrate: --engine and --tokenizer are required (or --refit PROFILE)\n");
    return 2;
  }
  try {
    const auto params = backends::parse_openai_decoder(o.engine);
    CalibrationPlan plan;
    plan.base_url = params.base_url;
    plan.model = params.model;
    plan.tokenizer = o.tokenizer;
    plan.max_concurrency = o.max_concurrency;
    plan.budget_s = o.budget_s;
    const bool terminal = isatty(STDERR_FILENO) != 0;
    const auto progress = [terminal](const std::string& line) {
      if (terminal) std::fprintf(stderr, "calibrate: %s\n", line.c_str());
    };
    const Calibration c = measure_engine(plan, progress);
    nlohmann::json prefill = nlohmann::json::array(), decode = nlohmann::json::array(), concurrent = nlohmann::json::array();
    for (const auto& s : c.concurrent)
      concurrent.push_back({{"concurrency", s.concurrency}, {"prompt_tokens", s.prompt_tokens}, {"ttft_s", s.ttft_s}});
    for (const auto& s : c.prefill) prefill.push_back({{"prompt_tokens", s.prompt_tokens}, {"ttft_s", s.ttft_s}});
    for (const auto& s : c.decode)
      decode.push_back({{"concurrency", s.level()}, {"batch", s.batch}, {"context_tokens", s.context_tokens}, {"tpot_s", s.tpot_s}});
    nlohmann::json lone = nlohmann::json::array();
    for (const auto& s : c.lone_decode) lone.push_back({{"context_tokens", s.context_tokens}, {"tpot_s", s.tpot_s}});
    const nlohmann::json profile = {
        {"kind", "overhead engine profile"},
        {"engine", ports::redact_url(plan.base_url)},  // a profile is shared: never the engine's password
        {"model", c.model},
        {"tokenizer", o.tokenizer},
        {"date", utc_now()},
        {"host", host_name()},
        {"budget_s", o.budget_s},
        {"elapsed_s", c.elapsed_s},
        {"max_concurrency", c.max_concurrency},
        {"engine_slots", c.slots},
        // The engine's step budget in tokens when it states it; else llama.cpp server's default n_batch.
        {"prefill_chunk_tokens", c.batch_tokens > 0 ? c.batch_tokens : kDefaultBatchTokens},
        {"v1_models", c.models},
        {"measurements",
         {{"prefill", prefill}, {"decode", decode}, {"lone_decode", lone}, {"concurrent_ttft", concurrent}, {"requests", c.raw}}}};
    fit_and_write(c, profile, o.out);
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "overhead calibrate: --engine: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead calibrate: %s\n", e.what());
    return 1;
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand("calibrate",
                                 "Measure an OpenAI-compatible engine and fit the server model: the profile `cost` and "
                                 "`simulate` take with --engine-profile");
  cmd->add_option("--engine", o->engine, "URL[,model=NAME]: the engine's API base, e.g. http://127.0.0.1:8000/v1 (required)");
  cmd->add_option("--tokenizer", o->tokenizer,
                  "Tokenizer that renders and counts the prompts (short name, folder or HF id; required)");
  cmd->add_option("--refit", o->refit,
                  "A profile calibrate wrote: fit its stored measurements again (nothing is measured) and write it to --out")
      ->excludes("--engine")
      ->excludes("--tokenizer");
  cmd->add_option("--out", o->out, "The profile to write (JSON)")->required();
  cmd->add_option("--max-concurrency", o->max_concurrency, "Most requests in flight (the engine's slots; at least 2, the fit needs two levels)")
      ->check(integer_in(2, 4096))
      ->capture_default_str();
  cmd->add_option("--budget-s", o->budget_s, "Seconds of measuring")->check(number_in(1, 86400))->capture_default_str();
  cmd->callback([o, &exit_code] { exit_code = run_calibrate(*o); });
}

}  // namespace overhead::cli
