// The report as files: DIR/report.md, DIR/index.html (one self-contained page, figures inline),
// DIR/fits.json (every fit with every statistic), DIR/*.csv (the tables) and DIR/figures/*.svg +
// *.png. This is the entry point `overhead analyze` and `overhead run` call.
#pragma once

#include <string>
#include <vector>

#include "ports/record.hpp"
#include "report/analysis.hpp"
#include "report/section.hpp"

namespace overhead::report {

struct ReportOptions {
  std::string out_dir = "out/report";
  bool compare_seed = false;
  bool png = true;  // convert the SVG figures with rsvg-convert
  std::string source;  // where the records came from (store URL), shown in the report
  std::vector<SectionMaker> sections;  // extra sections (e.g. the cost section), after the analysis
};

struct HeadlineFit {
  int case_number = 0;
  std::string tokenizer;
  double alpha = 0, beta = 0, r_squared = 0;
  std::size_t n = 0;
  std::string error;
};

struct ReportSummary {
  std::string report_path;  // DIR/index.html
  std::string markdown_path;
  std::string fits_path;
  std::vector<std::string> files;
  std::vector<HeadlineFit> headline;  // OLS (a) of the cycle time, per case and tokenizer
  std::vector<std::string> warnings;
  std::size_t records = 0;
};

// Throws std::runtime_error naming the path when a file cannot be written, and
// overhead::stats::StatsError when there is nothing to analyse.
ReportSummary write_report(const std::vector<ports::Record>& records, const ReportOptions& options);
// The same from an analysis already made (tests, benchmarks).
ReportSummary write_report(const Analysis& analysis, const ReportOptions& options);

// Prints the headline fits (alpha, beta, R^2 per case and tokenizer) and the report path.
void print_headline(const ReportSummary& summary, std::FILE* out = stdout);

}  // namespace overhead::report
