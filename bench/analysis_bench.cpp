// Analysis speed: one million generated records (three tokenizers, five cases, two workers per
// case) through the item table (timelines, stages) and the full analysis (token statistics, the
// case table, 120 OLS/Huber fits, histograms, mixtures, predictions); then the report files.
// Target (issue: analysis and report): < 3 s for 1M records on the 2-core machine.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "report/analysis.hpp"
#include "report/item_table.hpp"
#include "report/write_report.hpp"
#include "support/record_generator.hpp"

namespace {

const std::vector<overhead::ports::Record>& million() {
  static const auto records = [] {
    overhead::testing::GeneratorOptions o;
    o.cases = {1, 2, 3, 4, 5};
    o.workers = 2;
    o.items_per_tokenizer = 1'000'000 / 15 + 1;  // x 3 tokenizers x 5 cases
    return overhead::testing::generate_records(o);
  }();
  return records;
}

void BM_AnalyzeMillion(benchmark::State& state) {
  const auto& records = million();
  for (auto _ : state) {
    const auto table = overhead::report::build_item_table(records);
    auto analysis = overhead::report::analyze(table, {});
    benchmark::DoNotOptimize(analysis);
  }
  state.counters["records"] = static_cast<double>(records.size());
}
BENCHMARK(BM_AnalyzeMillion)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_AnalyzeAndWriteMillion(benchmark::State& state) {
  const auto& records = million();
  const auto dir = std::filesystem::temp_directory_path() / "overhead_analysis_bench";
  for (auto _ : state) {
    overhead::report::ReportOptions o;
    o.out_dir = dir.string();
    o.png = state.range(0) != 0;
    auto summary = overhead::report::write_report(records, o);
    benchmark::DoNotOptimize(summary);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AnalyzeAndWriteMillion)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
