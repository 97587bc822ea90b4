// The engine fit (cost/engine_profile): samples drawn from a known TTFT line and step function,
// with a little deterministic noise, give back their parameters; too few samples are a clear
// error; and the Roofline built from a fit reproduces the fitted step and prefill times.
#include "cost/engine_profile.hpp"

#include <gtest/gtest.h>

#include <random>

#include "cost/profiles.hpp"

namespace overhead::cost {
namespace {

constexpr double kBase = 0.012, kRate = 4000, kA = 0.003, kB = 0.0008, kC = 2e-7;

std::vector<PrefillSample> prefill_samples(std::mt19937& rng) {
  std::normal_distribution<double> noise(0, 0.0002);
  std::vector<PrefillSample> s;
  for (int round = 0; round < 3; ++round)
    for (const double len : {16.0, 64.0, 128.0, 256.0, 512.0, 1024.0}) s.push_back({len, kBase + len / kRate + noise(rng)});
  return s;
}

std::vector<DecodeSample> decode_samples(std::mt19937& rng) {
  std::normal_distribution<double> noise(0, 0.00002);
  std::vector<DecodeSample> s;
  for (const double batch : {1.0, 2.0, 4.0, 8.0})
    for (const double context : {48.0, 528.0, 1040.0})
      for (int i = 0; i < 3; ++i) s.push_back({batch, context, kA + kB * batch + kC * batch * context + noise(rng)});
  return s;
}

TEST(EngineFit, RecoversTheParametersOfAKnownEngine) {
  std::mt19937 rng(7);
  const auto fit = fit_engine(prefill_samples(rng), decode_samples(rng));
  EXPECT_NEAR(fit.ttft_base_s, kBase, 0.0005);
  EXPECT_NEAR(fit.prefill_tokens_per_s, kRate, kRate * 0.02);
  EXPECT_NEAR(fit.step_overhead_s, kA, 0.00005);
  EXPECT_NEAR(fit.sequence_overhead_s, kB, 0.00002);
  EXPECT_NEAR(fit.context_s_per_token, kC, kC * 0.05);
  EXPECT_GT(fit.decode_r_squared, 0.99);
  EXPECT_EQ(fit.prefill_residuals_s.size(), 18u);
  EXPECT_EQ(fit.decode_residuals_s.size(), 36u);
}

TEST(EngineFit, ExactSamplesGiveExactParameters) {
  std::vector<PrefillSample> p;
  for (const double len : {10.0, 100.0, 1000.0}) p.push_back({len, kBase + len / kRate});
  std::vector<DecodeSample> d;
  for (const double batch : {1.0, 4.0})
    for (const double context : {100.0, 900.0}) d.push_back({batch, context, kA + kB * batch + kC * batch * context});
  const auto fit = fit_engine(p, d);
  EXPECT_NEAR(fit.prefill_tokens_per_s, kRate, 1e-6 * kRate);
  EXPECT_NEAR(fit.step_s(3, 500), kA + kB * 3 + kC * 3 * 500, 1e-12);
}

TEST(EngineFit, TooFewSamplesNameWhatIsMissing) {
  std::mt19937 rng(1);
  const auto d = decode_samples(rng);
  std::vector<PrefillSample> two = {{16, 0.01}, {64, 0.02}};
  try {
    (void)fit_engine(two, d);
    FAIL() << "expected CostError";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("--budget-s"), std::string::npos) << e.what();
  }
  std::vector<DecodeSample> one_level = {{2, 48, 0.01}, {2, 528, 0.02}, {2, 48, 0.01}, {2, 528, 0.02}};
  EXPECT_THROW((void)fit_engine(prefill_samples(rng), one_level), CostError);
}

TEST(EngineFit, TheRooflineReproducesTheFit) {
  EngineProfile p;
  p.fit.prefill_tokens_per_s = kRate;
  p.fit.step_overhead_s = kA;
  p.fit.sequence_overhead_s = kB;
  p.fit.context_s_per_token = kC;
  p.max_concurrency = 8;
  const Roofline r = roofline_from_profile(p);
  EXPECT_NEAR(step_seconds(r, {4, 4 * 600.0, 0, 0}), p.fit.step_s(4, 600), 1e-12);
  // A prefill-only step of 1000 tokens: the step overhead and its tokens over the prefill rate.
  EXPECT_NEAR(step_seconds(r, {0, 0, 1000, 0}), kA + 1000 / kRate, 1e-12);
  // A mixed step: the two add up.
  EXPECT_NEAR(step_seconds(r, {4, 4 * 600.0, 1000, 0}), p.fit.step_s(4, 600) + 1000 / kRate, 1e-12);
  EXPECT_EQ(r.max_concurrency, 8);
}

}  // namespace
}  // namespace overhead::cost
