#include "report/write_report.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/record_generator.hpp"

namespace overhead::report {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(WriteReport, WritesEveryFileAndEveryFit) {
  testing::GeneratorOptions o;
  o.cases = {1, 5};
  o.items_per_tokenizer = 400;
  const auto records = testing::generate_records(o);
  ReportOptions ro;
  ro.out_dir = (fs::path(::testing::TempDir()) / "overhead_report_test").string();
  ro.compare_seed = true;
  ro.png = false;  // the Chromium test covers the PNG path with rsvg-convert
  ro.source = "generated";
  fs::remove_all(ro.out_dir);
  const ReportSummary s = write_report(records, ro);
  for (const char* f : {"report.md", "index.html", "fits.json", "token_stats.csv", "case_table.csv", "fits.csv",
                        "modes.csv", "predicted_vs_measured.csv", "cycle_histogram.csv", "headline.csv",
                        "figures/scatter.svg", "figures/histogram.svg", "figures/stages.svg", "figures/tokens.svg"}) {
    EXPECT_TRUE(fs::exists(fs::path(ro.out_dir) / f)) << f;
  }
  const auto fits = nlohmann::json::parse(slurp(s.fits_path));
  EXPECT_EQ(fits["fits"].size(), 2u * 4u * 6u);
  const auto& first = fits["fits"][0];
  for (const char* k : {"coefficients", "r_squared", "adj_r_squared", "resid_sd", "n", "df_resid"}) {
    EXPECT_TRUE(first.contains(k)) << k;
  }
  for (const char* k : {"estimate", "std_error", "t", "p", "ci_low", "ci_high"}) {
    EXPECT_TRUE(first["coefficients"][0].contains(k)) << k;
  }
  const std::string html = slurp(s.report_path);
  for (const char* id : {"fig-scatter", "fig-histogram", "fig-stages", "fig-tokens"}) {
    EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  }
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // self-contained
  EXPECT_NE(slurp(s.markdown_path).find("seed total (s)"), std::string::npos);
  ASSERT_EQ(s.headline.size(), 2u * 4u);
  std::FILE* devnull = std::fopen("/dev/null", "w");
  print_headline(s, devnull);
  std::fclose(devnull);
}

TEST(WriteReport, UnwritableDirectoryIsAnError) {
  ReportOptions ro;
  ro.out_dir = "/proc/overhead-cannot-write-here";
  ro.png = false;
  EXPECT_THROW(write_report(testing::generate_records({}), ro), std::runtime_error);
}

}  // namespace
}  // namespace overhead::report
