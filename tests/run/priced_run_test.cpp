// Every request priced, end to end: `overhead run` of case 5 (producer, input queue, worker with
// the sim decoder, log queue, consumer, store) with the worker's prices, and `overhead cost` of the
// same workload at the same prices and profile: the records' summed cost_usd is cost's figure
// within 2% (docs/cost-model.md, "Every request priced").
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/open.hpp"
#include "ports/store.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTokenizer = "llama-3.3-70b-instruct";
constexpr std::size_t kRequests = 300;
constexpr double kVcpuUsdPerHour = 0.1008 / 2;  // the m7i.large preset over its 2 vCPUs

bool have_tokenizer() { return fs::exists(fs::path(OVERHEAD_MODELS_DIR) / kTokenizer / "tokenizer.json"); }

// Runs a command; its standard output, and its exit code in `code`.
std::string capture(const std::string& cmd, int& code) {
  std::string out;
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = pclose(p);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The first `n` MT-Bench records with an answer (the sim decoder generates as many tokens as the
// answer has, and `cost --workload` counts the same answers).
void write_workload(const fs::path& file, std::size_t n) {
  int code = 0;
  const std::string all = capture("zcat '" + std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz'", code);
  std::ofstream out(file);
  std::size_t kept = 0;
  std::size_t at = 0;
  while (kept < n && at < all.size()) {
    const auto end = all.find('\n', at);
    const std::string line = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? all.size() : end + 1;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("answer") || !j["answer"].is_string() || j["answer"].get<std::string>().empty())
      continue;
    out << line << "\n";
    ++kept;
  }
}

TEST(PricedRun, TheRequestsSummedCostIsWhatOverheadCostPricesTheWorkloadAt) {
  if (!have_tokenizer()) GTEST_SKIP() << "tokenizer files not fetched";
  const fs::path dir = testing::temp_dir("priced");
  const fs::path data = dir / "workload.jsonl";
  write_workload(data, kRequests);
  const std::string profile = " --gpu h100-sxm --model llama-3.1-8b";
  int code = 0;
  (void)capture(std::string(OVERHEAD_BINARY) + " run --case 5 --data " + data.string() + " --tokenizers " + kTokenizer +
                    " --decoder sim:prefill=10000000,decode=10000000 --max-decodes 8" + profile +
                    " --price-instance m7i.large --no-progress --no-report --out " + (dir / "out").string(),
                code);
  ASSERT_EQ(code, 0);

  const auto store = backends::open_store("sqlite:" + (dir / "out" / "records.db").string());
  const auto records = ports::scan_in_key_order(*store, "");
  ASSERT_EQ(records.size(), kRequests);
  double usd = 0, e_usd = 0, d_usd = 0;
  for (const auto& r : records) {
    EXPECT_GT(r.cost_e_usd, 0) << r.id;
    EXPECT_GT(r.cost_d_usd, 0) << r.id;
    EXPECT_EQ(r.cost_usd, r.cost_e_usd + r.cost_d_usd) << r.id;
    EXPECT_NE(r.price_source.find("cpu: m7i.large $0.1008/h / 2 vCPUs"), std::string::npos) << r.price_source;
    EXPECT_NE(r.price_source.find("D from the profile"), std::string::npos) << r.price_source;
    usd += r.cost_usd;
    e_usd += r.cost_e_usd;
    d_usd += r.cost_d_usd;
  }
  // The same E for `cost`: the records' mean CPU time per request (E is linear, so the mean prices the sum).
  const double mean_cpu_us = e_usd / static_cast<double>(kRequests) / (kVcpuUsdPerHour / 3600) * 1e6;
  const std::string out = capture(std::string(OVERHEAD_BINARY) + " cost" + profile + " --max-throughput --workload " +
                                      data.string() + " --workload-tokenizer " + kTokenizer + " --e-us " +
                                      std::to_string(mean_cpu_us) + ",0 --cpu-usd-per-hour " +
                                      std::to_string(kVcpuUsdPerHour) + " --json",
                                  code);
  ASSERT_EQ(code, 0) << out;
  const auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["requests_in_workload"].get<std::size_t>(), kRequests);
  const double cost_usd = j["usd_per_request"].get<double>() * kRequests;
  const double cost_e_usd = kVcpuUsdPerHour / 3600 * j["e_s"]["mean"].get<double>() * kRequests;
  const double cost_d_usd = cost_usd - cost_e_usd;
  std::printf("summed per-request cost %.6g $ (E %.6g, D %.6g); overhead cost %.6g $ (E %.6g, D %.6g); ratio %.5f\n",
              usd, e_usd, d_usd, cost_usd, cost_e_usd, cost_d_usd, usd / cost_usd);
  RecordProperty("ratio", std::to_string(usd / cost_usd));
  EXPECT_NEAR(usd / cost_usd, 1.0, 0.02);
  EXPECT_NEAR(d_usd / cost_d_usd, 1.0, 0.02);
  EXPECT_NEAR(e_usd / cost_e_usd, 1.0, 1e-3);

  // The usage by key: no request came through a gateway's key, so one row of its own and the total.
  const std::string by_key = capture(std::string(OVERHEAD_BINARY) + " analyze --store sqlite:" +
                                         (dir / "out" / "records.db").string() + " --by key --no-png --out " +
                                         (dir / "report").string(),
                                     code);
  ASSERT_EQ(code, 0) << by_key;
  EXPECT_NE(by_key.find("| (no key) | 300 |"), std::string::npos) << by_key;
  EXPECT_NE(by_key.find("| all | 300 |"), std::string::npos) << by_key;
  EXPECT_TRUE(fs::exists(dir / "report" / "by_key.csv"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
