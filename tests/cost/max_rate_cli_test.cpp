// `overhead cost --max-rate` and `overhead simulate --max-rate` as a user runs them (the built
// binary): on the same deployment, workload, targets, requests and seed they find the same rate
// (one search, cost::find_max_rate) and price it within 2% of each other (cost at its steady
// state at that rate, simulate at the throughput it simulated there). The report's cost section
// takes the same load flags through the same struct (cost_section_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

namespace overhead::cost {
namespace {

nlohmann::json run_json(const std::string& args) {
  const std::string cmd = std::string(OVERHEAD_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) {
    EXPECT_EQ(pclose(p), 0) << cmd << "\n" << out;
  }
  return nlohmann::json::parse(out, nullptr, false);
}

struct Case {
  const char* deployment;
  const char* targets;
  double tpot_p99_ms;
};

TEST(MaxRateCli, CostAndSimulateFindAndPriceTheSameRate) {
  const Case cases[] = {
      {"--gpu h100-sxm --gpus 2 --tp 1 --model llama-3.1-8b --precision fp8 --kv-dtype fp8", "--ttft-p99-ms 200 --tpot-p99-ms 15", 15},
      {"--gpu h200 --gpus 2 --model llama-3.3-70b --precision fp8 --kv-dtype fp8", "--tpot-p99-ms 40", 40},
  };
  for (const auto& c : cases) {
    const std::string args = std::string(c.deployment) + " --workload in=500,out=200 --max-rate " + c.targets +
                             " --requests 20000 --seed 3 --json";
    const auto cost = run_json("cost " + args);
    const auto sim = run_json("simulate " + args);
    ASSERT_FALSE(cost.is_discarded()) << args;
    ASSERT_FALSE(sim.is_discarded()) << args;
    EXPECT_EQ(cost["mode"], "max_rate");
    const double rate = cost["max_rate"]["requests_per_s"].get<double>();
    EXPECT_GT(rate, 0) << args;
    EXPECT_DOUBLE_EQ(rate, sim["max_rate"]["requests_per_s"].get<double>()) << args;
    // The rate is below the fleet's capacity: the targets bind, not the search's upper end.
    EXPECT_LT(cost["utilization"].get<double>(), 0.99) << args;
    EXPECT_NEAR(cost["requests_per_s"].get<double>(), rate, 1e-9 * rate);
    const double cost_usd = cost["usd_per_request"].get<double>(), sim_usd = sim["usd_per_request"].get<double>();
    EXPECT_LE(std::fabs(cost_usd / sim_usd - 1), 0.02) << args << ": cost $" << cost_usd << ", simulate $" << sim_usd;
    // The simulated p99s at the rate meet the targets.
    EXPECT_LE(sim["tpot_s"]["p99"].get<double>() * 1000, c.tpot_p99_ms) << args;
  }
}

TEST(MaxRateCli, OneLoadAtATimeAndTargetsNeeded) {
  const std::string base = std::string(OVERHEAD_BINARY) + " cost --gpu h100-sxm --model llama-3.1-8b --precision fp8 ";
  EXPECT_NE(std::system((base + "--max-rate --utilization 0.5 > /dev/null 2>&1").c_str()), 0);
  EXPECT_NE(std::system((base + "--max-rate > /dev/null 2>&1").c_str()), 0);
  EXPECT_EQ(std::system((base + "--max-throughput > /dev/null 2>&1").c_str()), 0);
}

}  // namespace
}  // namespace overhead::cost
