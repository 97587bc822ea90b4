// `overhead calibrate` against the real engine (llama.cpp, tiny model, this machine's CPU): a
// short calibration, then a configuration it did not run (concurrency 3, a 256-token prompt) is
// measured on the engine and compared with the fit's prediction. The machine running the tests is
// shared and loaded, so only sanity bounds are asserted; the figures are printed for the record.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <condition_variable>

#include "backends/openai_decoder.hpp"
#include "cli/calibrate_engine.hpp"
#include "llama_engine.hpp"

namespace overhead::cli {
namespace {

struct Collect final : ports::DecodeCallbacks {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<ports::DecodeResult> done;
  int errors = 0;
  void on_done(ports::DecodeResult r) override {
    std::lock_guard lock(mutex);
    done.push_back(std::move(r));
    cv.notify_all();
  }
  void on_error(const ports::DecoderError&) override {
    std::lock_guard lock(mutex);
    ++errors;
    cv.notify_all();
  }
};

TEST(CalibrateEngine, FitsTheRealEngineAndPredictsAConfigurationItDidNotRun) {
  testing::LlamaEngine engine({.sequences = 4});
  CalibrationPlan plan;
  plan.base_url = engine.base_url();
  plan.tokenizer = std::string(OVERHEAD_MODELS_DIR) + "/llama-3.3-70b-instruct";
  plan.max_concurrency = 4;
  plan.budget_s = 20;
  const Calibration c = measure_engine(plan, nullptr);
  EXPECT_EQ(c.model, "tiny-llama3");
  EXPECT_EQ(c.slots, 4);
  EXPECT_EQ(c.batch_tokens, 512);  // node-llama-cpp's default batch, as its /v1/models states it
  EXPECT_LE(c.elapsed_s, 60);
  const auto fit = cost::fit_engine(c.prefill, c.decode);
  EXPECT_GT(fit.prefill_s_per_token + fit.ttft_s_per_token_squared, 0);

  // Concurrency 3 with 256-token prompts: neither was calibrated.
  backends::OpenAiDecoderParams params;
  params.base_url = plan.base_url;
  params.model = c.model;
  params.usage_required = true;
  const backends::OpenAiDecoder decoder(params);
  std::string prompt = "hello";
  for (int i = 1; i < 255; ++i) prompt += " hello";  // 256 tokens with the BOS
  auto collect = std::make_shared<Collect>();
  std::vector<std::shared_ptr<ports::DecodeTicket>> tickets;
  for (int i = 0; i < 3; ++i) {
    ports::DecodeRequest r;
    r.prompt = prompt;
    r.prompt_tokens = 256;
    r.max_tokens = 32;
    tickets.push_back(decoder.start(r, collect));
  }
  std::unique_lock lock(collect->mutex);
  ASSERT_TRUE(collect->cv.wait_for(lock, std::chrono::seconds(120),
                                   [&] { return collect->done.size() + static_cast<std::size_t>(collect->errors) == 3; }));
  ASSERT_EQ(collect->errors, 0);
  double tpot = 0, ttft = 0;
  int counted = 0;
  for (const auto& r : collect->done) {
    ttft += static_cast<double>(r.first_token - r.decode_start) / 1e9 / 3;
    if (r.output_tokens >= 3) {
      tpot += static_cast<double>(r.decode_end - r.first_token) / 1e9 / static_cast<double>(r.output_tokens - 1);
      ++counted;
    }
  }
  ASSERT_GT(counted, 0);
  tpot /= counted;
  const double predicted_tpot = fit.step_s(3, 256 + 16);
  std::printf("calibration: %zu prefill, %zu decode samples in %.1f s; prefill %.3g ms/token, step %.3f + %.3f b + %.3g b ctx ms\n",
              c.prefill.size(), c.decode.size(), c.elapsed_s, fit.prefill_s_per_token * 1e3, fit.step_overhead_s * 1e3,
              fit.sequence_overhead_s * 1e3, fit.context_s_per_token * 1e3);
  std::printf("unseen x3, 256 tokens: TPOT measured %.3f ms, predicted %.3f ms (%+.0f%%); TTFT measured %.2f ms\n",
              tpot * 1e3, predicted_tpot * 1e3, 100 * (predicted_tpot - tpot) / tpot, ttft * 1e3);
  // Sanity bounds only (a loaded, shared machine): the prediction is within a factor of 4.
  EXPECT_GT(predicted_tpot, tpot / 4);
  EXPECT_LT(predicted_tpot, tpot * 4);
}

}  // namespace
}  // namespace overhead::cli
