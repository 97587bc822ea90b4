// The named length distribution (data/workloads/sharegpt.json): its draws reproduce the statistic
// it cites (the mean input and output tokens of the benchmark run it was fitted to), stay within
// the benchmark sampler's bounds, and are the same for the same seed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "cost/json_file.hpp"
#include "cost/length_distribution.hpp"

namespace overhead::cost {
namespace {

const std::filesystem::path kData = OVERHEAD_DATA_DIR;

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

LengthDistribution sharegpt() {
  const auto d = load_length_distribution("sharegpt", kData / "workloads");
  EXPECT_TRUE(d.has_value());
  return d.value_or(LengthDistribution{});
}

TEST(LengthDistribution, ShareGptReproducesTheCitedMeansAtAnyCount) {
  // vLLM 0.11's ShareGPT run on Qwen3 32B (gpustack): 217,393 input and 201,422 generated tokens
  // over 1000 requests.
  const auto d = sharegpt();
  EXPECT_DOUBLE_EQ(d.input.mean, 217.393);
  EXPECT_DOUBLE_EQ(d.output.mean, 201.422);
  for (std::size_t n : {100u, 1000u, 10000u}) {
    const auto w = draw_workload(d, n, 1);
    ASSERT_EQ(w.input_tokens.size(), n);
    EXPECT_NEAR(mean_of(w.input_tokens), 217.393, 0.005 * 217.393) << n;
    EXPECT_NEAR(mean_of(w.output_tokens), 201.422, 0.005 * 201.422) << n;
  }
}

TEST(LengthDistribution, ShareGptStaysWithinTheBenchmarkSamplersBounds) {
  // A prompt or answer under 4 tokens is dropped, so is a prompt over 1024 or both over 2048.
  const auto w = draw_workload(sharegpt(), 10000, 7);
  for (std::size_t i = 0; i < w.input_tokens.size(); ++i) {
    EXPECT_GE(w.input_tokens[i], 4);
    EXPECT_LE(w.input_tokens[i], 1024);
    EXPECT_GE(w.output_tokens[i], 4);
    EXPECT_LE(w.input_tokens[i] + w.output_tokens[i], 2048);
    EXPECT_EQ(w.output_tokens[i], std::round(w.output_tokens[i]));
  }
  // Long-tailed: the longest answer of 1000 is several times the mean (an exponential's 0.9995
  // quantile is 7.6 means above its minimum), which sets an offline run's span.
  const auto run = draw_workload(sharegpt(), 1000, 1);
  EXPECT_GT(*std::max_element(run.output_tokens.begin(), run.output_tokens.end()), 5 * 201.422);
}

TEST(LengthDistribution, TheSameSeedDrawsTheSameRequests) {
  const auto a = draw_workload(sharegpt(), 500, 3), b = draw_workload(sharegpt(), 500, 3), c = draw_workload(sharegpt(), 500, 4);
  EXPECT_EQ(a.input_tokens, b.input_tokens);
  EXPECT_EQ(a.output_tokens, b.output_tokens);
  EXPECT_NE(a.input_tokens, c.input_tokens);
  // Another seed pairs and orders the same quantiles differently.
  auto sa = a.input_tokens, sc = c.input_tokens;
  std::sort(sa.begin(), sa.end());
  std::sort(sc.begin(), sc.end());
  EXPECT_EQ(sa, sc);
}

TEST(LengthDistribution, OtherMeansKeepTheLawAndItsBounds) {
  // DataCrunch's SGLang ShareGPT run on Llama 3.3 70B: 448,102 input and 383,064 output tokens
  // over 2000 requests.
  const auto w = draw_workload(with_means(sharegpt(), 224.051, 191.532), 2000, 1);
  EXPECT_NEAR(mean_of(w.input_tokens), 224.051, 0.005 * 224.051);
  EXPECT_NEAR(mean_of(w.output_tokens), 191.532, 0.005 * 191.532);
  EXPECT_THROW(draw_workload(with_means(sharegpt(), 2000, 100), 100, 1), CostError);  // inputs stop at 1024
}

TEST(LengthDistribution, TheFileNamesItsSourcesAndAnUnknownNameIsNone) {
  const auto j = read_json_file(kData / "workloads" / "sharegpt.json");
  EXPECT_NE(j.at("fitted_to").get<std::string>().find("https://github.com/gpustack/gpustack/blob/"), std::string::npos);
  for (const char* key : {"bounds", "family", "raw_dataset"}) EXPECT_TRUE(j.at("sources").contains(key)) << key;
  EXPECT_FALSE(load_length_distribution("no-such-distribution", kData / "workloads").has_value());
}

}  // namespace
}  // namespace overhead::cost
