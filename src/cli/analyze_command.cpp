// `overhead analyze --store URL [--experiment NAME ...] [--run ID] [--out DIR] [--compare-seed] [--no-png]
// [--engine-profile P] [--by key]`:
// reads the records of the chosen experiments (all when none is named) from the store, of one run
// when --run names it (all runs by default), and writes the report (report.md, index.html,
// fits.json, CSVs, figures) into --out. An experiment that holds the records of several runs is
// named with its runs, so a report over all of them is never mistaken for one run's. With
// --engine-profile (`overhead calibrate`'s), a run made with `--decoder openai:` gets a section of
// each item's E, TTFT, TPOT and D next to the profile's prediction (report/engine_prediction_section).
// With --by key, the records grouped by the API key they were charged to (requests, tokens, E, D and
// total USD per key, report/key_usage), printed and added to the report.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <exception>
#include <string>
#include <vector>

#include "backends/open.hpp"
#include "cli/commands.hpp"
#include "cli/cost_report_options.hpp"
#include "pipe/run_id.hpp"
#include "ports/store.hpp"
#include "report/engine_prediction_section.hpp"
#include "report/key_usage.hpp"
#include "report/run_selection.hpp"
#include "report/write_report.hpp"

namespace overhead::cli {

namespace {

struct AnalyzeOptions {
  std::string store_url;
  std::vector<std::string> experiments;
  std::string run_id;  // empty = every run
  std::string out_dir = "out/report";
  bool compare_seed = false;
  bool no_png = false;
  std::string engine_profile;
  std::string by;  // "key": the usage by key
  std::shared_ptr<report::CostSectionOptions> cost = std::make_shared<report::CostSectionOptions>();
};

int run_analyze(const AnalyzeOptions& o) {
  try {
    const auto cost_section = cost_report_section(*o.cost);
    std::optional<cost::EngineProfile> profile;
    if (!o.engine_profile.empty()) profile = cost::load_engine_profile(o.engine_profile);
    // A reader: the store is opened read-only, so analysing a file never changes it.
    auto store = backends::open_store(o.store_url, backends::Access::read_only);
    std::vector<ports::Record> records;
    if (o.experiments.empty()) {
      records = ports::scan_in_key_order(*store, "");
    } else {
      for (const auto& name : o.experiments) {
        auto found = ports::scan_in_key_order(*store, name);
        if (found.empty()) {
          const std::vector<std::string> held = ports::experiments_in(*store);
          std::string list;
          for (const auto& h : held) list += (list.empty() ? "" : ", ") + h;
          std::fprintf(stderr, "overhead analyze: experiment '%s' is not in %s (it holds: %s)\n", name.c_str(),
                       store->url().c_str(), list.empty() ? "nothing" : list.c_str());
          return 1;
        }
        for (auto& r : found) records.push_back(std::move(r));
      }
    }
    if (records.empty()) {
      std::fprintf(stderr, "overhead analyze: no records in %s\n", store->url().c_str());
      return 1;
    }
    const std::vector<report::ExperimentRuns> runs = report::runs_by_experiment(records);
    if (!o.run_id.empty()) {
      report::keep_run(records, o.run_id);
      if (records.empty()) {
        std::string held;
        for (const auto& e : runs) held += "\n  " + report::describe_runs(e);
        std::fprintf(stderr, "overhead analyze: run '%s' has no records in %s%s; it holds:%s\n", o.run_id.c_str(),
                     store->url().c_str(), o.experiments.empty() ? "" : " (in the experiments named)", held.c_str());
        return 1;
      }
      std::printf("analysing run %s: %zu record(s)\n", o.run_id.c_str(), records.size());
    } else {
      for (const auto& e : runs)
        if (e.runs.size() > 1)
          std::printf("note: %s; this report covers them all (`--run ID` picks one)\n", report::describe_runs(e).c_str());
    }
    report::ReportOptions ro;
    ro.out_dir = o.out_dir;
    ro.compare_seed = o.compare_seed;
    ro.png = !o.no_png;
    ro.source = store->url() + (o.run_id.empty() ? "" : " (run " + o.run_id + ")");
    if (cost_section) ro.sections.push_back(*cost_section);
    if (o.by == "key") {
      report::ReportSection section = report::key_usage_section(records);
      std::printf("%s\n", report::to_markdown(section.tables.front()).c_str());
      ro.sections.push_back([s = std::move(section)](const report::Analysis&) { return s; });
    }
    if (profile) {
      auto section = report::engine_prediction_section(records, *profile, o.engine_profile);
      if (!section) {
        std::fprintf(stderr, "overhead analyze: --engine-profile: no record has decode stamps (run with --decoder openai:)\n");
        return 1;
      }
      ro.sections.push_back([s = std::move(*section)](const report::Analysis&) { return s; });
    }
    const report::ReportSummary summary = report::write_report(records, ro);
    report::print_headline(summary);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "overhead analyze: %s\n", e.what());
    return 1;
  }
}

}  // namespace

void add_analyze_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* cmd = app.add_subcommand("analyze", "Statistics, E(x) fits and the HTML/Markdown report from a record store");
  cmd->add_option("--store", options->store_url, "Record store URL, e.g. sqlite:out/records.db")->required();
  cmd->add_option("--experiment", options->experiments, "Experiment(s) to analyse (default: all in the store)");
  cmd->add_option("--run", options->run_id, "Analyse the records of this run id only (default: every run)")
      ->check(CLI::Validator([](std::string& s) { return pipe::run_id_error(s); }, "ID", "run id"));
  cmd->add_option("--out", options->out_dir, "Output folder")->capture_default_str();
  cmd->add_flag("--compare-seed", options->compare_seed, "Put the seed's case figures beside ours");
  cmd->add_flag("--no-png", options->no_png, "Write SVG figures only (skip rsvg-convert)");
  cmd->add_option("--engine-profile", options->engine_profile,
                  "`overhead calibrate`'s profile: each decoded item next to its prediction");
  cmd->add_option("--by", options->by,
                  "Group the usage by: key (requests, tokens, E, D and total USD per API key; printed and in the "
                  "report as by_key.csv)")
      ->check(CLI::IsMember({"key"}));
  add_cost_report_options(*cmd, options->cost);
  cmd->callback([options, &exit_code] { exit_code = run_analyze(*options); });
}

}  // namespace overhead::cli
