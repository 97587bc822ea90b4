// The figures of `overhead simulate --plots`: one depth line per stage over the simulated span,
// and one bar per percentile of every figure that is not zero, on a run computed by hand.
#include <gtest/gtest.h>

#include <string>

#include "report/simulation_figures.hpp"

namespace overhead::report {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

cost::SimResult two_stage_run() {
  cost::SimResult r;
  r.requests = 3;
  r.depth_times = {0, 1, 2, 3};
  cost::StageResult cpu;
  cpu.name = "cpu";
  cpu.depth = {0, 1, 0, 0};
  cpu.service_s = {0.001, 0.001, 0.001, 0.001};  // its wait stays 0: no bars for it
  cost::StageResult gpu;
  gpu.name = "gpu";
  gpu.depth = {0, 2, 1, 0};
  gpu.saturated = true;
  gpu.wait_s = {0.5, 0.4, 1.0, 1.2};
  gpu.service_s = {2, 2, 2, 2};
  r.stages = {cpu, gpu};
  r.latency_s = {2.6, 2.4, 3.1, 3.3};
  return r;
}

TEST(SimulationFigures, ADepthLinePerStageAndABarPerNonZeroPercentile) {
  const auto figures = simulation_figures(two_stage_run(), "test run");
  ASSERT_EQ(figures.size(), 2u);
  EXPECT_EQ(figures[0].name, "sim_queue_depth");
  EXPECT_EQ(count(figures[0].svg, "<polyline"), 2u);
  EXPECT_NE(figures[0].svg.find("gpu (saturated)"), std::string::npos);
  EXPECT_NE(figures[0].svg.find("test run"), std::string::npos);
  EXPECT_EQ(figures[1].name, "sim_latency");
  // cpu service, gpu wait, gpu service, end to end: 4 groups x p50/p95/p99 (cpu wait is all 0),
  // besides the white background every figure has (the depth figure has that one rect only).
  EXPECT_EQ(count(figures[1].svg, "<rect"), 4u * 3u + count(figures[0].svg, "<rect"));
  for (const char* label : {"cpu wait", "cpu service", "gpu wait", "gpu service", "end to end"})
    EXPECT_NE(figures[1].svg.find(label), std::string::npos) << label;
}

}  // namespace
}  // namespace overhead::report
