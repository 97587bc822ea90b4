// The cost section: what the plots draw is the model's values (read back from the SVG's data
// attributes), and the analysis report carries the section with the figures of its own E fit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cost/pricing.hpp"
#include "report/cost_section.hpp"
#include "report/table.hpp"
#include "report/write_report.hpp"
#include "support/record_generator.hpp"

namespace overhead::report {
namespace {

namespace fs = std::filesystem;

CostSectionOptions options() {
  CostSectionOptions o;
  o.pricing.scenario.profiles_dir = (fs::path(OVERHEAD_DATA_DIR) / "profiles").string();
  o.pricing.scenario.gpu = "h200";
  o.pricing.scenario.gpus = 2;
  o.pricing.scenario.model = "llama-3.3-70b";
  o.pricing.load.utilization = 0.5;
  o.pricing.api_prices = {"llama-3.3-70b"};
  return o;
}

// (data-x, data-y) of every element of `cls` in an SVG. Scanned by hand: GCC 12's <regex> trips
// -Wmaybe-uninitialized under the sanitizer build, which CI runs with -Werror.
std::vector<std::pair<double, double>> marks(const std::string& svg, const std::string& cls) {
  std::vector<std::pair<double, double>> out;
  const std::string head = "class=\"" + cls + "\" data-x=\"";
  const std::string mid = "\" data-y=\"";
  for (auto at = svg.find(head); at != std::string::npos; at = svg.find(head, at + 1)) {
    const auto x_begin = at + head.size();
    const auto x_end = svg.find('"', x_begin);
    if (x_end == std::string::npos || svg.compare(x_end, mid.size(), mid) != 0) continue;
    const auto y_begin = x_end + mid.size();
    const auto y_end = svg.find('"', y_begin);
    if (y_end == std::string::npos) break;
    out.push_back({std::stod(svg.substr(x_begin, x_end - x_begin)),
                   std::stod(svg.substr(y_begin, y_end - y_begin))});
  }
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(CostSection, UtilizationPlotPointsAreTheModelsValues) {
  const cost::ELinear e{120, 0.2, "typed in"};
  const auto v = cost_view(options().pricing, e, cost::parse_workload("in=200,out=400"));
  const auto points = marks(cost_utilization_figure(v).svg, "point");
  ASSERT_EQ(points.size(), v.sensitivity.by_utilization.size());
  for (const auto& [u, usd] : points) {
    cost::CostInputs in = v.inputs;
    in.utilization = u;
    EXPECT_DOUBLE_EQ(usd, cost::compute_cost(in, v.w).usd_per_1m_tokens_blended) << u;
  }
  // The preset API ($0.88 flat) breaks even inside (0, 1] on 2 x H200, and the ring sits there.
  const auto rings = marks(cost_utilization_figure(v).svg, "break-even");
  ASSERT_EQ(rings.size(), 1u);
  ASSERT_TRUE(v.result.break_even_utilization);
  EXPECT_DOUBLE_EQ(rings[0].first, *v.result.break_even_utilization);
  EXPECT_DOUBLE_EQ(rings[0].second, 0.88);
  const auto here = marks(cost_utilization_figure(v).svg, "here");
  ASSERT_EQ(here.size(), 1u);
  EXPECT_DOUBLE_EQ(here[0].second, v.result.usd_per_1m_tokens_blended);
}

// The section prices the fleet under any of `cost`'s loads, read from the same PricingOptions, and
// draws its marker at the utilization that load came to.
TEST(CostSection, TakesEveryLoadOfCost) {
  const cost::ELinear e{120, 0.2, "typed in"};
  const auto w = cost::parse_workload("in=200,out=400");
  auto o = options();
  o.pricing.load.mode = cost::Load::max_throughput;
  const auto full = cost_view(o.pricing, e, w);
  EXPECT_DOUBLE_EQ(full.result.utilization, 1);
  EXPECT_DOUBLE_EQ(marks(cost_utilization_figure(full).svg, "here")[0].first, 1);

  o.pricing.load.mode = cost::Load::concurrency;
  o.pricing.load.concurrency = 40;
  const auto closed = cost_view(o.pricing, e, w);
  EXPECT_EQ(closed.inputs.mode, cost::LoadMode::concurrency);
  EXPECT_LT(closed.result.utilization, 1);
  EXPECT_DOUBLE_EQ(marks(cost_utilization_figure(closed).svg, "here")[0].first, closed.result.utilization);

  o.pricing.load.mode = cost::Load::max_rate;
  o.pricing.load.targets.tpot_p99_ms = 40;
  o.pricing.load.requests = 5000;
  const auto scenario = cost::make_scenario(o.pricing.scenario);
  const auto priced = cost::price_load(scenario, o.pricing.load, e, w);
  ASSERT_TRUE(priced.max_rate);
  const auto at_rate = cost_view(o.pricing, e, w);
  EXPECT_NEAR(at_rate.result.requests_per_s, priced.max_rate->rate, 1e-9 * priced.max_rate->rate);
  EXPECT_LT(at_rate.result.utilization, 1);
}

TEST(CostSection, DecodePlotPointsAreTheModelsValues) {
  const auto v = cost_view(options().pricing, {120, 0.2, "typed in"}, cost::parse_workload("in=200,out=400"));
  const auto svg = cost_decode_figure(v).svg;
  const auto points = marks(svg, "point");
  ASSERT_EQ(points.size(), v.sensitivity.by_decode.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_DOUBLE_EQ(points[i].first, v.sensitivity.by_decode[i].x);
    EXPECT_DOUBLE_EQ(points[i].second, v.sensitivity.by_decode[i].usd_per_1m_tokens_blended);
  }
  const auto here = marks(svg, "here");
  ASSERT_EQ(here.size(), 1u);
  EXPECT_DOUBLE_EQ(here[0].first, v.result.output_tokens_per_s / 0.5);  // full load = U 0.5 doubled
  EXPECT_EQ(marks(svg, "break-even").size(), 1u);
}

TEST(CostSection, GpuTableHasEveryShippedProfile) {
  // 70B in BF16 (141 GB) fits one H200 (the 143771 MiB it reports, less the runtime's reserve).
  auto o = options();
  o.pricing.scenario.gpus = 1;
  const auto v = cost_view(o.pricing, {120, 0.2, "typed in"}, cost::parse_workload("in=200,out=400"));
  const Table t = gpu_profiles_table(v);
  ASSERT_EQ(t.rows.size(), cost::list_profiles(options().pricing.scenario.profiles_dir, "gpu").size());
  for (const auto& row : t.rows) {
    if (row[0] != "h200") continue;
    EXPECT_EQ(row[1], "1");
    EXPECT_EQ(row[7], fixed(v.result.usd_per_1m_tokens_blended, 4));  // the same replica as the headline
  }
}

TEST(CostSection, AnalysisReportCarriesTheSectionWithItsOwnFit) {
  testing::GeneratorOptions g;
  g.items_per_tokenizer = 300;
  const auto records = testing::generate_records(g);
  ReportOptions ro;
  ro.out_dir = (fs::path(::testing::TempDir()) / "overhead_cost_section_test").string();
  ro.png = false;
  fs::remove_all(ro.out_dir);
  ro.sections.push_back(cost_section_maker(options()));
  const auto summary = write_report(records, ro);

  // The section's E is the report's own OLS fit of case 5 for the first tokenizer.
  const auto& h = summary.headline.front();
  ASSERT_EQ(h.case_number, 5);
  const auto v = cost_view(options().pricing, {h.alpha, h.beta, "x"}, cost::parse_workload("in=200,out=400"));
  const std::string md = slurp(summary.markdown_path);
  EXPECT_NE(md.find("## Cost: T = E(x) + D(y|x)"), std::string::npos);
  EXPECT_NE(md.find("| usd_per_1m_tokens_blended | " + fixed(v.result.usd_per_1m_tokens_blended, 4) + " |"),
            std::string::npos);
  EXPECT_NE(md.find("| break_even_utilization vs llama-3.3-70b | " + fixed(*v.result.break_even_utilization, 4) + " |"),
            std::string::npos);
  EXPECT_NE(md.find(h.tokenizer + ", OLS on cycle"), std::string::npos);
  const std::string html = slurp(summary.report_path);
  EXPECT_NE(html.find("id=\"fig-cost_utilization\""), std::string::npos);
  EXPECT_NE(html.find("id=\"fig-cost_decode\""), std::string::npos);
  for (const char* f : {"figures/cost_utilization.svg", "figures/cost_decode.svg", "cost_gpus.csv", "cost_summary.csv"})
    EXPECT_TRUE(fs::exists(fs::path(ro.out_dir) / f)) << f;
}

TEST(CostSection, MissingFitSaysSoInTheReport) {
  auto o = options();
  o.case_number = 3;  // the generated records are case 5 only
  testing::GeneratorOptions g;
  g.items_per_tokenizer = 100;
  ReportOptions ro;
  ro.out_dir = (fs::path(::testing::TempDir()) / "overhead_cost_section_missing").string();
  ro.png = false;
  fs::remove_all(ro.out_dir);
  ro.sections.push_back(cost_section_maker(o));
  const auto summary = write_report(testing::generate_records(g), ro);
  EXPECT_NE(slurp(summary.markdown_path).find("Not computed: no OLS cycle fit for case 3"), std::string::npos);
}

}  // namespace
}  // namespace overhead::report
