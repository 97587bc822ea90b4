#include "report/write_report.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "report/decoder_section.hpp"
#include "report/figures.hpp"
#include "report/report_tables.hpp"

extern char** environ;

namespace overhead::report {

namespace {

namespace fs = std::filesystem;

const char* const kDefinitions = R"(- **Cycle time** of an item: per worker (experiment, case, worker) in `seq` order, from the item's start (its `received` stamp, the moment the worker has it in hand) to the next item's start on the same worker. The last item of a worker ends at its own latest stamp (`input_deleted`, else `publish_acked`, else `encode_end`), as it has no next start. Items without a `received` stamp have no cycle time.
- **Stages** split each cycle along the stamps: wait (received → render_start), render, encode (→ encode_end), record (→ publish_start), publish (→ publish_acked), delete (→ input_deleted), and **receive wait**, the rest of the cycle until the next item is in hand (the queue's receive round trip at a batch turnover). A stage still running when the next item starts (asynchronous publish, batch delete) counts only up to that start. The stages add up to the cycle exactly.
- **Service time** = cycle time − receive wait.
- **Turnover** `1[B]`: the item's cycle spans a batch turnover, i.e. the next item on its worker starts a new input batch (`batch_boundary`). This is the item that pays the receive/delete round trip.
- **Tokens** `|x|` = `token_count`; `api_input` beside it where records carry it. Token statistics count each prompt once per tokenizer.
- **Quantiles**: numpy's default (linear interpolation).
- **Fits**: OLS with intercept; t-based p-values and 95% intervals with n − p degrees of freedom; R² centred; residual SD = √(SSR/(n − p)). Robust variant: Huber M-estimator (t = 1.345, MAD scale, IRLS as statsmodels' RLM) on the cycle time, with z-based inference. Times are in µs.
- **Two modes**: a two-component normal mixture on log cycle time; items above the point where the weighted densities cross form the upper mode.
- **Predicted vs measured**: each tokenizer's fit applied to its own items and summed. For OLS with an intercept this equals the measured sum by construction (residuals sum to zero); the robust fits show how much of the total the tail carries.)";

void write_file(const fs::path& path, const std::string& content, ReportSummary& summary) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << content;
  if (!out) throw std::runtime_error("error writing " + path.string());
  summary.files.push_back(path.string());
}

// rsvg-convert SVG -> PNG, run directly (no shell, so no quoting of paths).
bool svg_to_png(const fs::path& svg, const fs::path& png, std::string& error) {
  const std::string in = svg.string(), out = png.string();
  std::vector<std::string> args = {"rsvg-convert", "--format=png", "--output=" + out, in};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, "rsvg-convert", nullptr, nullptr, argv.data(), environ) != 0) {
    error = "rsvg-convert not found (Debian package librsvg2-bin): PNG figures not written";
    return false;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    error = "rsvg-convert failed on " + in;
    return false;
  }
  return true;
}

nlohmann::json coefficient_json(const stats::Coefficient& c) {
  return {{"name", c.name}, {"estimate", c.estimate}, {"std_error", c.std_error}, {"t", c.t},
          {"p", c.p},       {"ci_low", c.ci_low},     {"ci_high", c.ci_high}};
}

// NaN is not JSON: null instead.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

std::string fits_json(const Analysis& a, const ReportOptions& options) {
  nlohmann::json j;
  j["source"] = options.source;
  j["records"] = a.records;
  j["timed_items"] = a.timed_items;
  j["units"] = {{"time", "microseconds"}, {"tokens", "token_count"}};
  j["models"] = {{"a", "y = const + tokens*beta"}, {"b", "y = const + turnover*alpha2 + tokens*beta"}};
  j["fits"] = nlohmann::json::array();
  for (const auto& f : a.fits) {
    nlohmann::json e = {{"case", f.case_number}, {"tokenizer", f.tokenizer}, {"target", f.target},
                        {"model", f.model},      {"method", f.method},       {"n", f.n}};
    if (f.ols) {
      e["coefficients"] = nlohmann::json::array();
      for (const auto& c : f.ols->coefficients) e["coefficients"].push_back(coefficient_json(c));
      e["df_resid"] = f.ols->df_resid;
      e["r_squared"] = number(f.ols->r_squared);
      e["adj_r_squared"] = number(f.ols->adj_r_squared);
      e["resid_sd"] = number(f.ols->resid_sd);
      e["ssr"] = number(f.ols->ssr);
      e["f_statistic"] = number(f.ols->f_statistic);
      e["f_p"] = number(f.ols->f_p);
    } else if (f.robust) {
      e["coefficients"] = nlohmann::json::array();
      for (const auto& c : f.robust->coefficients) e["coefficients"].push_back(coefficient_json(c));
      e["scale"] = f.robust->scale;
      e["iterations"] = f.robust->iterations;
      e["converged"] = f.robust->converged;
      e["downweighted_share"] = f.robust->downweighted_share;
      e["inference"] = "normal (z), H1 covariance";
    } else {
      e["error"] = f.error;
    }
    j["fits"].push_back(std::move(e));
  }
  j["modes"] = nlohmann::json::array();
  for (const auto& h : a.histograms) {
    j["modes"].push_back({{"case", h.case_number}, {"items", h.items}, {"fitted", h.modes.fitted},
                          {"upper_share", number(h.modes.upper_share)}, {"threshold_us", number(h.modes.threshold)},
                          {"turnover_share", number(h.turnover_share)}, {"boundary_share", number(h.boundary_share)},
                          {"weights", {number(h.modes.weight_low), number(h.modes.weight_high)}},
                          {"log_means", {number(h.modes.mean_low), number(h.modes.mean_high)}},
                          {"log_sds", {number(h.modes.sd_low), number(h.modes.sd_high)}},
                          {"bic_one", number(h.modes.bic_one)}, {"bic_two", number(h.modes.bic_two)}});
  }
  j["warnings"] = a.warnings;
  return j.dump(1) + "\n";
}

std::string markdown(const Analysis& a, const std::vector<Table>& tables, const std::vector<Figure>& figures,
                     const ReportOptions& options, const std::vector<ReportSection>& sections) {
  std::string md = "# overhead: analysis of " + std::to_string(a.records) + " records\n\n";
  if (!options.source.empty()) md += "Source: `" + options.source + "`.\n\n";
  md += "## Definitions\n\n" + std::string(kDefinitions) + "\n\n";
  if (!a.warnings.empty()) {
    md += "## Warnings\n\n";
    for (const auto& w : a.warnings) md += "- " + w + "\n";
    md += "\n";
  }
  for (const auto& t : tables) {
    if (t.name == "cycle_histogram" || t.name == "fits") continue;  // long: in the CSV files
    md += "## " + t.title + "\n\n" + to_markdown(t) + "\n";
  }
  md += "Every fit with every statistic: `fits.json`, `fits.csv`.\n\n## Figures\n\n";
  for (const auto& f : figures) md += "![" + f.caption + "](figures/" + f.name + ".svg)\n\n*" + f.caption + "*\n\n";
  for (const auto& s : sections) md += s.markdown;
  return md;
}

std::string markdown_to_html_list(const std::string& md) {
  // The definitions are a flat list with **bold** and `code`: enough to render them by hand.
  std::string out = "<ul>\n";
  std::size_t start = 0;
  while (start < md.size()) {
    std::size_t end = md.find('\n', start);
    if (end == std::string::npos) end = md.size();
    std::string line = md.substr(start + 2, end - start - 2);
    std::string html;
    bool bold = false, code = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
      if (line.compare(i, 2, "**") == 0) {
        html += bold ? "</strong>" : "<strong>";
        bold = !bold;
        ++i;
      } else if (line[i] == '`') {
        html += code ? "</code>" : "<code>";
        code = !code;
      } else {
        html += html_escape(std::string(1, line[i]));
      }
    }
    out += "<li>" + html + "</li>\n";
    start = end + 1;
  }
  return out + "</ul>\n";
}

std::string html(const Analysis& a, const std::vector<Table>& tables, const std::vector<Figure>& figures,
                 const ReportOptions& options, const std::vector<ReportSection>& sections) {
  std::string h = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>overhead: analysis</title>
<style>
body{font-family:"DejaVu Sans",Arial,sans-serif;margin:2em auto;max-width:1200px;color:#222;line-height:1.4}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f2f2f2} td:first-child,td:nth-child(2){text-align:left}
figure{margin:1em 0 2em} figcaption{font-size:13px;color:#555;max-width:900px}
svg{max-width:100%;height:auto} .warn{color:#a33}
details{margin:1em 0}
</style></head><body>
)";
  h += "<h1>overhead: analysis of " + std::to_string(a.records) + " records</h1>\n";
  if (!options.source.empty()) h += "<p>Source: <code>" + html_escape(options.source) + "</code></p>\n";
  if (!a.warnings.empty()) {
    h += "<ul class=\"warn\">";
    for (const auto& w : a.warnings) h += "<li>" + html_escape(w) + "</li>";
    h += "</ul>\n";
  }
  auto table_section = [&](const std::string& name) {
    for (const auto& t : tables) {
      if (t.name == name) h += "<h2>" + html_escape(t.title) + "</h2>\n" + to_html(t);
    }
  };
  auto figure = [&](const std::string& name) {
    for (const auto& f : figures) {
      if (f.name == name) {
        h += "<figure id=\"figure-" + f.name + "\" data-figure=\"" + f.name + "\">\n" + f.svg + "<figcaption>" +
             html_escape(f.caption) + "</figcaption></figure>\n";
      }
    }
  };
  table_section("headline");
  figure("scatter");
  table_section("case_table");
  figure("stages");
  table_section("modes");
  figure("histogram");
  table_section("token_stats");
  figure("tokens");
  table_section("predicted_vs_measured");
  for (const auto& s : sections) h += s.html;
  h += "<h2>Definitions</h2>\n" + markdown_to_html_list(kDefinitions);
  h += "<details><summary>Every fit (also in fits.json and fits.csv)</summary>\n";
  for (const auto& t : tables) {
    if (t.name == "fits") h += to_html(t);
  }
  h += "</details>\n";
  // Marks, once laid out, how many figures have a non-empty box: the headless-browser test reads it.
  h += R"(<script>
window.addEventListener('load', function () {
  var n = 0;
  document.querySelectorAll('figure[data-figure] svg').forEach(function (s) {
    var b = s.getBoundingClientRect();
    if (b.width > 0 && b.height > 0 && s.querySelectorAll('rect,circle,polyline,line').length > 3) n++;
  });
  document.body.setAttribute('data-figures-rendered', String(n));
});
</script>
</body></html>
)";
  return h;
}

}  // namespace

ReportSummary write_report(const std::vector<ports::Record>& records, const ReportOptions& options) {
  AnalysisOptions ao;
  ao.compare_seed = options.compare_seed;
  const Analysis a = analyze(build_item_table(records), ao);
  if (auto d = decoder_section(records)) {
    // Only when a decoder ran: a report of records without D stamps is as it was.
    ReportOptions with_d = options;
    with_d.sections.insert(with_d.sections.begin(), [d = std::move(*d)](const Analysis&) { return d; });
    return write_report(a, with_d);
  }
  return write_report(a, options);
}

ReportSummary write_report(const Analysis& a, const ReportOptions& options) {
  ReportSummary summary;
  summary.records = a.records;
  summary.warnings = a.warnings;
  const fs::path dir(options.out_dir);
  std::error_code ec;
  fs::create_directories(dir / "figures", ec);
  if (ec) throw std::runtime_error("cannot create " + (dir / "figures").string() + ": " + ec.message());

  const std::vector<Table> tables = all_tables(a);
  const std::vector<Figure> figures = make_figures(a);
  std::vector<ReportSection> sections;
  for (const auto& make : options.sections) sections.push_back(make(a));
  std::vector<Table> files_tables = tables;
  std::vector<Figure> files_figures = figures;
  for (const auto& s : sections) {
    files_tables.insert(files_tables.end(), s.tables.begin(), s.tables.end());
    files_figures.insert(files_figures.end(), s.figures.begin(), s.figures.end());
  }
  for (const auto& t : files_tables) write_file(dir / (t.name + ".csv"), to_csv(t), summary);
  for (const auto& f : files_figures) {
    const fs::path svg = dir / "figures" / (f.name + ".svg");
    write_file(svg, svg_file(f), summary);
    if (options.png) {
      std::string error;
      const fs::path png = dir / "figures" / (f.name + ".png");
      if (svg_to_png(svg, png, error)) {
        summary.files.push_back(png.string());
      } else {
        summary.warnings.push_back(error);
        break;
      }
    }
  }
  summary.fits_path = (dir / "fits.json").string();
  write_file(summary.fits_path, fits_json(a, options), summary);
  summary.markdown_path = (dir / "report.md").string();
  write_file(summary.markdown_path, markdown(a, tables, figures, options, sections), summary);
  summary.report_path = (dir / "index.html").string();
  write_file(summary.report_path, html(a, tables, figures, options, sections), summary);

  for (const auto& f : a.fits) {
    if (f.target != "cycle" || f.model != "a" || f.method != "ols") continue;
    HeadlineFit hf{f.case_number, f.tokenizer, NAN, NAN, NAN, f.n, f.error};
    if (f.ols) {
      hf.alpha = f.ols->coefficients[0].estimate;
      hf.beta = f.ols->coefficients[1].estimate;
      hf.r_squared = f.ols->r_squared;
    }
    summary.headline.push_back(hf);
  }
  return summary;
}

void print_headline(const ReportSummary& summary, std::FILE* out) {
  std::fprintf(out, "E(x) = alpha + beta*tokens (OLS on the per-item cycle time, µs):\n");
  std::fprintf(out, "  %-5s %-28s %10s %12s %12s %8s\n", "case", "tokenizer", "n", "alpha", "beta", "R^2");
  for (const auto& h : summary.headline) {
    if (!h.error.empty()) {
      std::fprintf(out, "  %-5d %-28s %10zu   not fitted: %s\n", h.case_number, h.tokenizer.c_str(), h.n, h.error.c_str());
      continue;
    }
    std::fprintf(out, "  %-5d %-28s %10zu %12.3f %12.5f %8.4f\n", h.case_number, h.tokenizer.c_str(), h.n, h.alpha,
                 h.beta, h.r_squared);
  }
  for (const auto& w : summary.warnings) std::fprintf(out, "warning: %s\n", w.c_str());
  std::fprintf(out, "report: %s\n", summary.report_path.c_str());
}

}  // namespace overhead::report
