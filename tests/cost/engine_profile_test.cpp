// The engine fit (cost/engine_profile): samples drawn from a known TTFT line and step function,
// with a little deterministic noise, give back their parameters; too few samples are a clear
// error; and the Roofline built from a fit reproduces the fitted step and prefill times.
#include "cost/engine_profile.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "cost/profiles.hpp"
#include "cost/scenario.hpp"

namespace overhead::cost {
namespace {

constexpr double kBase = 0.012, kRate = 4000, kA = 0.003, kB = 0.0008, kC = 2e-7;

// The profile of the known engine the samples below come from (its prefill and step parameters),
// 8 sequences at once.
EngineProfile known_profile() {
  EngineProfile p;
  p.fit.prefill_s_per_token = 1 / kRate;
  p.fit.step_overhead_s = kA;
  p.fit.sequence_overhead_s = kB;
  p.fit.context_s_per_token = kC;
  p.max_concurrency = 8;
  return p;
}

// The known engine's samples without noise: three prompt lengths, two batches at two contexts.
std::vector<PrefillSample> exact_prefill_samples() {
  std::vector<PrefillSample> p;
  for (const double len : {10.0, 100.0, 1000.0}) p.push_back({len, kBase + len / kRate});
  return p;
}
std::vector<DecodeSample> exact_decode_samples() {
  std::vector<DecodeSample> d;
  for (const double batch : {1.0, 4.0})
    for (const double context : {100.0, 900.0}) d.push_back({batch, context, kA + kB * batch + kC * batch * context});
  return d;
}

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
  EXPECT_NEAR(fit.prefill_s_per_token, 1 / kRate, 0.02 / kRate);
  EXPECT_NEAR(fit.step_overhead_s, kA, 0.00005);
  EXPECT_NEAR(fit.sequence_overhead_s, kB, 0.00002);
  EXPECT_NEAR(fit.context_s_per_token, kC, kC * 0.05);
  EXPECT_GT(fit.decode_r_squared, 0.99);
  EXPECT_EQ(fit.prefill_residuals_s.size(), 18u);
  EXPECT_EQ(fit.decode_residuals_s.size(), 36u);
}

TEST(EngineFit, ExactSamplesGiveExactParameters) {
  const std::vector<PrefillSample> p = exact_prefill_samples();
  const std::vector<DecodeSample> d = exact_decode_samples();
  const auto fit = fit_engine(p, d);
  EXPECT_NEAR(fit.prefill_s_per_token, 1 / kRate, 1e-6 / kRate);
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
  EngineProfile p = known_profile();
  const Roofline r = roofline_from_profile(p);
  EXPECT_NEAR(step_seconds(r, {4, 4 * 600.0, 0, 0}), p.fit.step_s(4, 600), 1e-12);
  // A prefill-only step of 1000 tokens: the step overhead and its tokens over the prefill rate.
  EXPECT_NEAR(step_seconds(r, {0, 0, 1000, 0}), kA + 1000 / kRate, 1e-12);
  // A mixed step: the two add up.
  EXPECT_NEAR(step_seconds(r, {4, 4 * 600.0, 1000, 0}), p.fit.step_s(4, 600) + 1000 / kRate, 1e-12);
  EXPECT_EQ(r.max_concurrency, 8);
}

TEST(EngineFit, AQuadraticPromptIsFittedAndTheRooflineChargesItThroughTheContext) {
  constexpr double kQ = 3e-8;
  std::vector<PrefillSample> p;
  for (const double len : {16.0, 64.0, 256.0, 1024.0}) p.push_back({len, kBase + len / kRate + kQ * len * len});
  EngineProfile profile;
  profile.fit = fit_engine(p, exact_decode_samples());
  EXPECT_NEAR(profile.fit.ttft_s_per_token_squared, kQ, 1e-6 * kQ);
  EXPECT_NEAR(profile.fit.prefill_s_per_token, 1 / kRate, 1e-6 / kRate);
  profile.max_concurrency = 8;
  const Roofline r = roofline_from_profile(profile);
  // A whole 1000-token prompt attends to 1000^2 / 2 context tokens: q x 1000^2.
  EXPECT_NEAR(step_seconds(r, {0, 0, 1000, 1000 * 1000 / 2.0}), kA + 1000 / kRate + kQ * 1e6, 1e-12);
  // The TTFT's base beyond the step overhead is per request, outside the steps.
  EXPECT_NEAR(r.request_overhead_s, kBase - kA, 1e-12);
}

TEST(EngineFit, AnAllQuadraticPromptHasNoLinearTermRatherThanANegativeOne) {
  std::vector<PrefillSample> p;
  for (const double len : {16.0, 64.0, 256.0, 1024.0}) p.push_back({len, 0.01 + 1e-6 * len * len});
  std::vector<DecodeSample> d = {{1, 100, 0.004}, {1, 900, 0.005}, {4, 100, 0.008}, {4, 900, 0.012}};
  const auto fit = fit_engine(p, d);
  EXPECT_GE(fit.prefill_s_per_token, 0);
  EXPECT_NEAR(fit.ttft_s(1024), 0.01 + 1e-6 * 1024 * 1024, 0.01 * fit.ttft_s(1024));
}

TEST(EngineFit, TheRequestOverheadIsAddedToTheTtftAndSlowsAClosedLoopsClients) {
  EngineProfile p = known_profile();
  const Roofline without = roofline_from_profile(p);
  p.fit.ttft_base_s = kA + 0.05;  // 50 ms per request outside the steps
  const Roofline with = roofline_from_profile(p);
  const SteadyState a = steady_state(without, 4, 200, 100, false), b = steady_state(with, 4, 200, 100, false);
  // The TTFT is the engine's at the clients it holds at once, plus the 50 ms.
  EXPECT_LT(b.sequences, 4);
  EXPECT_NEAR(b.ttft_s, steady_state(without, b.sequences, 200, 100, false).ttft_s + 0.05, 1e-12);
  EXPECT_GT(b.ttft_s, a.ttft_s);
  // Each of the 4 clients cycles through the engine time plus the 50 ms: requests/s = 4 / cycle.
  const double engine_s = std::max(b.sequences, 0.0) / b.requests_per_s;
  EXPECT_NEAR(b.requests_per_s, 4 / (engine_s + 0.05), 1e-3 * b.requests_per_s);
  EXPECT_LT(b.requests_per_s, a.requests_per_s);
  // Open loop: only the TTFT moves.
  const SteadyState c = steady_state(without, 4, 200, 100, true), e = steady_state(with, 4, 200, 100, true);
  EXPECT_NEAR(e.ttft_s, c.ttft_s + 0.05, 1e-12);
  EXPECT_EQ(e.requests_per_s, c.requests_per_s);
}

// Requests sent together whose TTFTs hold a known share of the others' prefill steps: the fit
// gives the share back (exact samples, so exactly), and 0 without such samples.
TEST(EngineFit, TheQueueShareOfRequestsSentTogetherIsFitted) {
  const std::vector<PrefillSample> p = exact_prefill_samples();
  const std::vector<DecodeSample> d = exact_decode_samples();
  EXPECT_EQ(fit_engine(p, d).queue_share, 0);
  std::vector<ConcurrentTtftSample> together;
  for (const double n : {2.0, 4.0, 8.0})
    for (const double len : {32.0, 512.0}) {
      // The others' prefill steps: the step with the other n - 1 decoding, and the prompt.
      const double other = kA + kB * (n - 1) + kC * (n - 1) * len + len / kRate;
      for (int i = 0; i < 3; ++i) together.push_back({n, len, kBase + len / kRate + 0.5 * (n - 1) * other});
    }
  const auto fit = fit_engine(p, d, together);
  EXPECT_NEAR(fit.queue_share, 0.5, 1e-9);
  EXPECT_EQ(fit.queue_points, 6u);
  EXPECT_NEAR(fit.concurrent_ttft_s(4, 512), together[9].ttft_s, 1e-12);
}

// A closed loop of clients: a request's own prefill is never in its TPOT (measured from its first
// token), and Little's law holds: sequences = rate x (TTFT + (out - 1) TPOT). The queue share k
// moves the others' prompts that meet a request's before its first token: the TTFT grows with k,
// the TPOT shrinks, the rate stays (the engine does the same steps). Arrivals at random instants
// (open loop) are priced as before.
TEST(EngineFit, AClosedLoopWaitsThroughTheQueueShareOfTheOthersPrompts) {
  EngineProfile p = known_profile();
  const Roofline apart = roofline_from_profile(p);
  // One client: its TPOT is the decode step alone, not the decode step plus its own prompt's step
  // spread over its tokens. (The steady state's steps hold 99 decodes per 100 steps, at context
  // 200 + 50, the prompt's step too.)
  const SteadyState one = steady_state(apart, 1, 200, 100, false);
  const double decode = kA + kB * 0.99 + kC * 0.99 * 250;
  EXPECT_NEAR(one.tpot_s, decode, 1e-12);
  EXPECT_NEAR(one.ttft_s, decode + 200 / kRate, 1e-12);
  EXPECT_NEAR(one.ttft_s + 99 * one.tpot_s, 1 / one.requests_per_s, 1e-12);

  std::vector<SteadyState> by_share;
  for (const double k : {0.0, 0.5, 1.0}) {
    p.fit.queue_share = k;
    by_share.push_back(steady_state(roofline_from_profile(p), 4, 200, 100, false));
    const SteadyState& s = by_share.back();
    EXPECT_NEAR(s.ttft_s + 99 * s.tpot_s, 4 / s.requests_per_s, 1e-9) << k;
    EXPECT_NEAR(s.requests_per_s, by_share.front().requests_per_s, 1e-9 * s.requests_per_s) << k;
    EXPECT_EQ(steady_state(roofline_from_profile(p), 4, 200, 100, true).ttft_s, steady_state(apart, 4, 200, 100, true).ttft_s);
    // One client meets no other prompt.
    EXPECT_NEAR(steady_state(roofline_from_profile(p), 1, 200, 100, false).ttft_s, one.ttft_s, 1e-12);
  }
  EXPECT_LT(by_share[0].ttft_s, by_share[1].ttft_s);
  EXPECT_LT(by_share[1].ttft_s, by_share[2].ttft_s);
  EXPECT_GT(by_share[0].tpot_s, by_share[1].tpot_s);
  EXPECT_GT(by_share[1].tpot_s, by_share[2].tpot_s);
}

// An engine whose lone sequence's context costs less per token than each of a batch's (the tests'
// llama.cpp engine: 0.4 against 0.9 to 1.2 us): the line a + b batch + c batch context cannot
// fit both; a lone sequence's own measured line does.
constexpr double kLoneC = 0.4e-6, kBatchC = 1e-6;
double lone_cheaper(double batch, double context) {
  return kA + kB * batch + (batch <= 1 ? kLoneC : kBatchC) * batch * context;
}
std::vector<DecodeSample> lone_cheaper_samples() {
  std::vector<DecodeSample> d;
  for (const double batch : {1.0, 2.0, 4.0, 8.0})
    for (const double context : {48.0, 528.0}) d.push_back({batch, context, lone_cheaper(batch, context)});
  return d;
}

TEST(EngineFit, ALoneSequenceKeepsItsOwnMeasuredStep) {
  const auto fit = fit_engine(exact_prefill_samples(), lone_cheaper_samples());
  ASSERT_EQ(fit.decode_levels.levels.size(), 4u);
  EXPECT_DOUBLE_EQ(fit.decode_levels.levels[0].batch, 1);
  EXPECT_NEAR(fit.decode_levels.levels[0].s_per_context_token, kLoneC, 1e-12);
  // A lone sequence at 816 tokens of context (past the calibrated 528): its own level's line,
  // which the line through every level misses.
  EXPECT_NEAR(fit.step_s(1, 816), lone_cheaper(1, 816), 1e-9);
  const auto line = [&](double batch, double context) {
    return fit.step_overhead_s + fit.sequence_overhead_s * batch + fit.context_s_per_token * batch * context;
  };
  EXPECT_GT(std::abs(line(1, 816) - lone_cheaper(1, 816)) / lone_cheaper(1, 816), 0.05) << "the line alone fits it";
  // Two or more sequences: the line, at and between the calibrated batches, and past the last.
  for (const double batch : {2.0, 3.0, 4.0, 6.0, 8.0, 10.0}) EXPECT_NEAR(fit.step_s(batch, 300), line(batch, 300), 1e-12) << batch;
  // Between one and two sequences, from the lone step to the line; under one, toward its fixed part.
  EXPECT_NEAR(fit.step_s(1.5, 300), (lone_cheaper(1, 300) + line(2, 300)) / 2, 1e-12);
  EXPECT_NEAR(fit.step_s(0.5, 300), (fit.step_overhead_s + lone_cheaper(1, 300)) / 2, 1e-12);
  // cost and simulate price the decodes of a step by the same levels, and prompts on top.
  EngineProfile p;
  p.fit = fit;
  p.max_concurrency = 8;
  const Roofline r = roofline_from_profile(p);
  EXPECT_NEAR(step_seconds(r, {1, 816, 0, 0}), fit.step_s(1, 816), 1e-12);
  EXPECT_NEAR(step_seconds(r, {4, 4 * 600.0, 1000, 0}), fit.step_s(4, 600) + 1000 * fit.prefill_s_per_token, 1e-12);
}

// The calibration's lone prompts' tokens after the first: lone decodes at six more contexts, which
// give the lone line its slope (with the waves' two lone points alone, it swung by half between
// two calibrations) and leave the line of the batches alone.
TEST(EngineFit, TheLonePromptsDecodesJoinTheLoneLevelOnly) {
  std::vector<DecodeSample> waves;
  for (const double batch : {1.0, 2.0, 4.0, 8.0})
    for (const double context : {48.0, 528.0}) {
      double t = lone_cheaper(batch, context);
      if (batch == 1 && context > 100) t *= 1.05;  // a slow minute on the waves' one long lone point
      waves.push_back({batch, context, t});
    }
  std::vector<DecodeSample> lone;
  for (const double context : {24.0, 72.0, 136.0, 264.0, 520.0, 1032.0})
    for (int i = 0; i < 4; ++i) lone.push_back({1, context, lone_cheaper(1, context), 1});
  const auto without = fit_engine(exact_prefill_samples(), waves);
  const auto with = fit_engine(exact_prefill_samples(), waves, {}, lone);
  const double truth = lone_cheaper(1, 816);
  EXPECT_GT(std::abs(without.step_s(1, 816) - truth) / truth, 0.04);
  EXPECT_LT(std::abs(with.step_s(1, 816) - truth) / truth, 0.02);
  EXPECT_DOUBLE_EQ(with.step_overhead_s, without.step_overhead_s);
  EXPECT_DOUBLE_EQ(with.step_s(4, 300), without.step_s(4, 300));
}

TEST(EngineFit, TheLevelsAreWrittenToTheProfileAndReadBack) {
  const auto fit = fit_engine(exact_prefill_samples(), lone_cheaper_samples());
  const auto file = std::filesystem::temp_directory_path() / ("engine_levels_test_" + std::to_string(::getpid()) + ".json");
  nlohmann::json j = {{"max_concurrency", 8}, {"fit", engine_fit_json(fit)}};
  std::ofstream(file) << j.dump();
  const EngineProfile back = load_engine_profile(file);
  ASSERT_EQ(back.fit.decode_levels.levels.size(), 4u);
  EXPECT_DOUBLE_EQ(back.fit.step_s(1, 816), fit.step_s(1, 816));
  // Levels out of order are an error naming the field.
  std::swap(j["fit"]["decode_levels"]["levels"][0], j["fit"]["decode_levels"]["levels"][1]);
  std::ofstream(file) << j.dump();
  try {
    (void)load_engine_profile(file);
    FAIL() << "expected CostError";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("fit.decode_levels.levels[1].batch"), std::string::npos) << e.what();
  }
  // A profile written before the levels: the line.
  j["fit"].erase("decode_levels");
  std::ofstream(file) << j.dump();
  const EngineProfile old = load_engine_profile(file);
  EXPECT_TRUE(old.fit.decode_levels.empty());
  EXPECT_NEAR(old.fit.step_s(4, 600), fit.step_overhead_s + 4 * fit.sequence_overhead_s + fit.context_s_per_token * 2400, 1e-12);
  std::filesystem::remove(file);
}

// An engine that overstates its usage makes the step shrink as sequences are added: the fit is an
// error, not a profile (it was written, with a negative time per token, and priced by `cost`).
TEST(EngineFit, AStepThatShrinksWithTheBatchIsAnErrorNotAProfile) {
  std::vector<DecodeSample> d;
  for (const double batch : {1.0, 4.0})
    for (const double context : {100.0, 900.0}) d.push_back({batch, context, 0.010 - 0.002 * batch});
  try {
    (void)fit_engine(exact_prefill_samples(), d);
    FAIL() << "expected CostError";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("negative slope"), std::string::npos) << e.what();
  }
}

// A context term a little below 0 is the noise of an engine whose context costs next to nothing:
// dropped (0), the step fitted on the batch alone, not an error.
TEST(EngineFit, AContextTermBelowZeroIsDroppedNotAnError) {
  std::vector<DecodeSample> d;
  for (const double batch : {1.0, 4.0})
    for (const double context : {100.0, 900.0}) d.push_back({batch, context, 0.002 + 0.001 * batch - 1e-8 * batch * context});
  const auto fit = fit_engine(exact_prefill_samples(), d);
  EXPECT_EQ(fit.context_s_per_token, 0);
  EXPECT_GT(fit.sequence_overhead_s, 0);
}

// A profile with such a fit (written by hand, or by a version that wrote one) is refused by the
// readers `cost` and `simulate` use, naming the field.
TEST(EngineFit, AProfileWithANegativeSlopeOrStepIsRefused) {
  const auto fit = fit_engine(exact_prefill_samples(), lone_cheaper_samples());
  const auto file = std::filesystem::temp_directory_path() / ("engine_negative_test_" + std::to_string(::getpid()) + ".json");
  const auto error_with = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = {{"max_concurrency", 8}, {"fit", engine_fit_json(fit)}};
    edit(j);
    std::ofstream(file) << j.dump();
    try {
      (void)load_engine_profile(file);
    } catch (const CostError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(error_with([](nlohmann::json& j) { j["fit"]["sequence_overhead_s"] = -0.001; }).find("fit.sequence_overhead_s"),
            std::string::npos);
  EXPECT_NE(error_with([](nlohmann::json& j) { j["fit"]["context_s_per_token"] = -1e-6; }).find("fit.context_s_per_token"),
            std::string::npos);
  EXPECT_NE(error_with([](nlohmann::json& j) { j["fit"]["decode_levels"]["levels"][2]["step_s"] = -0.004; })
                .find("fit.decode_levels.levels[2]"),
            std::string::npos);
  EXPECT_EQ(error_with([](nlohmann::json&) {}), "");
  std::filesystem::remove(file);
}

TEST(EngineProfileScenario, IsPricedByANamedInstanceOrTheFlag) {
  const auto file = std::filesystem::temp_directory_path() / ("engine_profile_test_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(file);
    out << nlohmann::json{{"engine", "http://e/v1"}, {"model", "m"}, {"max_concurrency", 4},
                          {"fit", {{"ttft_base_s", 0.02}, {"prefill_s_per_token", 1e-4}, {"step_overhead_s", 0.003},
                                   {"sequence_overhead_s", 0.001}, {"context_s_per_token", 1e-6}}}}
               .dump();
  }
  ScenarioSpec spec;
  spec.profiles_dir = std::filesystem::path(OVERHEAD_DATA_DIR) / "profiles";
  spec.engine_profile = file.string();
  spec.instance = "l4";
  const Scenario s = make_scenario(spec);
  EXPECT_DOUBLE_EQ(s.gpu_usd_per_hour, s.prices.instances.at("l4").usd_per_hour);
  EXPECT_EQ(s.gpu_price_source, "l4 preset");
  spec.instance = "no-such-gpu";
  try {
    (void)make_scenario(spec);
    FAIL() << "expected CostError";
  } catch (const CostError& e) {
    EXPECT_NE(std::string(e.what()).find("--instance no-such-gpu"), std::string::npos) << e.what();
  }
  spec.instance = "l4";
  spec.gpu_usd_per_hour = 1;
  EXPECT_THROW((void)make_scenario(spec), CostError);  // one of the two
  spec.instance.clear();
  EXPECT_DOUBLE_EQ(make_scenario(spec).gpu_usd_per_hour, 1);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace overhead::cost
