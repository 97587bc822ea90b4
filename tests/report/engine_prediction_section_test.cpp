// The engine-prediction section of `analyze --engine-profile`: the batch each item met is the mean
// number of generations in flight over its own decode; each item's prediction is the profile's
// TTFT, step and D at that batch; items without decode stamps give no section.
#include "report/engine_prediction_section.hpp"

#include <gtest/gtest.h>

namespace overhead::report {
namespace {

ports::Record decoding(std::int64_t start_ms, std::int64_t end_ms, std::int64_t prompt = 100, std::int64_t tokens = 11) {
  ports::Record r;
  r.case_number = 5;
  r.tokenizer = "llama";
  r.id = "item" + std::to_string(start_ms);
  r.token_count = prompt;
  r.decode_start = (1000 + start_ms) * 1'000'000;  // stamps are monotonic clock readings, never 0
  r.render_start = r.decode_start - 50'000;
  r.encode_end = r.decode_start - 10'000;
  r.first_token = r.decode_start + 2'000'000;
  r.decode_end = (1000 + end_ms) * 1'000'000;
  r.output_tokens = tokens;
  return r;
}

cost::EngineProfile profile() {
  cost::EngineProfile p;
  p.model = "m";
  p.fit.ttft_base_s = 0.002;
  p.fit.prefill_s_per_token = 1e-4;
  p.fit.step_overhead_s = 0.003;
  p.fit.sequence_overhead_s = 0.001;
  p.fit.context_s_per_token = 1e-6;
  return p;
}

TEST(EnginePredictionSection, TheBatchIsTheMeanInFlightOverEachDecode) {
  // a: 0-100 ms alone for its first half, with b for its second; b: 50-150; c: no decode.
  std::vector<ports::Record> records = {decoding(0, 100), decoding(50, 150), ports::Record{}};
  const auto in_flight = mean_in_flight(records);
  ASSERT_EQ(in_flight.size(), 3u);
  EXPECT_DOUBLE_EQ(in_flight[0], 1.5);
  EXPECT_DOUBLE_EQ(in_flight[1], 1.5);
  EXPECT_EQ(in_flight[2], 0);
  // Nested: d 0-100, e 25-75 (e always has d beside it).
  records = {decoding(0, 100), decoding(25, 75)};
  const auto nested = mean_in_flight(records);
  EXPECT_DOUBLE_EQ(nested[0], 1.5);
  EXPECT_DOUBLE_EQ(nested[1], 2);
}

TEST(EnginePredictionSection, ThePredictionIsTheProfilesAtThatBatch) {
  const auto fit = profile().fit;
  const auto p = predict_item(fit, 100, 11, 2);
  const double context = 100 + 5.5;
  EXPECT_DOUBLE_EQ(p.tpot_s, 0.003 + 0.001 * 2 + 1e-6 * 2 * context);
  EXPECT_DOUBLE_EQ(p.ttft_s, 0.002 + 0.01 + (0.001 + 1e-6 * context));
  EXPECT_DOUBLE_EQ(p.d_s, p.ttft_s + 10 * p.tpot_s);
}

TEST(EnginePredictionSection, EveryItemIsInTheTableWithItsPrediction) {
  const std::vector<ports::Record> records = {decoding(0, 100), decoding(50, 150)};
  const auto s = engine_prediction_section(records, profile(), "profile.json");
  ASSERT_TRUE(s.has_value());
  ASSERT_EQ(s->tables.size(), 2u);
  const auto& items = s->tables[0];
  ASSERT_EQ(items.rows.size(), 2u);
  EXPECT_EQ(items.rows[0][2], "item0");
  EXPECT_EQ(items.rows[0][5], "1.50");
  EXPECT_EQ(items.rows[0][7], "2.000");   // TTFT measured, ms
  EXPECT_EQ(items.rows[0][9], "9.800");   // TPOT: 98 ms over 10 tokens
  EXPECT_EQ(items.rows[0][11], "100.000");  // D
  EXPECT_NE(s->markdown.find("The engine against its profile"), std::string::npos);
  EXPECT_NE(s->markdown.find("profile.json"), std::string::npos);
}

TEST(EnginePredictionSection, NoneWithoutDecodeStamps) {
  const std::vector<ports::Record> records(3);
  EXPECT_FALSE(engine_prediction_section(records, profile(), "p").has_value());
}

}  // namespace
}  // namespace overhead::report
