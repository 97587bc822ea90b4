// A request's price against hand-computed numbers: E at the vCPU's price, D from a profile's
// rates per prompt and output token (which sum, over a workload, to what `overhead cost` prices
// it at), and D from the measured share of the engine's time; and where the prices come from.
#include <gtest/gtest.h>

#include <string>

#include "cost/cost_model.hpp"
#include "cost/request_price.hpp"

namespace overhead::cost {
namespace {

// cost_model_test's round server model: for in = 500, out = 1000 at its batch limit of 10, a step
// lasts 0.025 s on average and 0.01 requests complete per step, so a request takes 2.5 s of the
// replica. 1 step in 100 carries a 500-token prompt (0.025495 s), the others only decode
// (0.024995 s): the prompt adds 0.0005 s, 1e-6 s per prompt token; the 2.4995 s left are
// 0.0024995 s per output token.
Roofline round_roofline() {
  Roofline r;
  r.gpus = 1;
  r.flops_per_s = 1e15;
  r.bytes_per_s = 1e12;
  r.memory_bytes = 100e9;
  r.weight_bytes = 15.005e9;
  r.active_parameters = 5e9;
  r.kv_bytes_per_token = 1e6;
  r.max_concurrency = 10;
  return r;
}

TEST(RequestPrice, TokenRatesSplitTheReplicasSecondsPerRequest) {
  const TokenRates t = token_rates(round_roofline(), 500, 1000);
  EXPECT_NEAR(t.per_input_token_s, 1e-6, 1e-12);
  EXPECT_NEAR(t.per_output_token_s, 0.0024995, 1e-12);
  EXPECT_NEAR(500 * t.per_input_token_s + 1000 * t.per_output_token_s, 2.5, 1e-9);
}

TEST(RequestPrice, EIsTheCpuTimeAtTheVcpusPrice) {
  RequestPrices p;
  p.cpu_usd_per_s = 0.1008 / 2 / 3600;  // m7i.large: $0.1008/h over 2 vCPUs
  const RequestPricer pricer(p);
  const RequestCost c = pricer.price({0.0002, 100, 50, 0, false});
  EXPECT_DOUBLE_EQ(c.e_usd, 0.0002 * 0.0504 / 3600);  // 2.8e-9 $
  EXPECT_EQ(c.d_usd, 0.0);                            // no GPU price: D not priced
  EXPECT_DOUBLE_EQ(c.usd(), c.e_usd);
}

TEST(RequestPrice, DFromAProfileChargesEachRequestItsTokensAtTheMeanRequestsRates) {
  RequestPrices p;
  p.gpu_usd_per_s = 1;  // $3600/h: D in $ is the replica's seconds
  p.replica = round_roofline();
  p.reference = std::pair{500.0, 1000.0};
  const RequestPricer pricer(p);
  EXPECT_NEAR(pricer.price({0, 500, 1000, 0, true}).d_usd, 2.5, 1e-9);
  // Half the tokens, half the price: 250 x 1e-6 + 500 x 0.0024995 = 1.25 s.
  EXPECT_NEAR(pricer.price({0, 250, 500, 0, true}).d_usd, 1.25, 1e-9);
  // A long prompt with a short answer: 1000 x 1e-6 + 10 x 0.0024995 = 0.025995 s.
  EXPECT_NEAR(pricer.price({0, 1000, 10, 0, true}).d_usd, 0.025995, 1e-12);
  // Nothing decoded (no decoder): no D.
  EXPECT_EQ(pricer.price({0, 500, 1000, 0, false}).d_usd, 0.0);
}

TEST(RequestPrice, AWorkloadSumsToWhatTheCostModelPricesIt) {
  // Requests of 500/1000 priced at the mean given sum to compute_cost's price of them.
  RequestPrices p;
  p.gpu_usd_per_s = 1;
  p.replica = round_roofline();
  p.reference = std::pair{500.0, 1000.0};
  const RequestPricer pricer(p);
  const double sum = pricer.price({0, 500, 1000, 0, true}).d_usd + pricer.price({0, 500, 1000, 0, true}).d_usd;
  CostInputs in;
  in.gpu = round_roofline();
  in.mode = LoadMode::max_throughput;
  in.gpu_usd_per_hour = 3600;
  const CostResult r = compute_cost(in, Workload{{500, 500}, {1000, 1000}});
  EXPECT_NEAR(sum, 2 * r.usd_per_request, 1e-9 * sum);
  EXPECT_NEAR(r.usd_per_request, 2.5, 1e-9);
  // 250/500 and 750/1500 have the same mean, but the long one holds its slot three times as many
  // steps, so it is 3/4 of the running batch: a decoding sequence's mean context is
  // (499 x 500 + 1499 x 1500) / 1998 = 1249.7 tokens, not 1000, and the 10 running read 12.5 GB
  // of KV a step beside the 15 GB of weights. compute_cost sizes the steady state from the draws:
  // about 0.0275 s a step, 2.75 s of the replica a request, where the mean request's rates say 2.5.
  const CostResult mixed = compute_cost(in, Workload{{250, 750}, {500, 1500}});
  EXPECT_NEAR(mixed.usd_per_request, 2.75, 0.005);
}

TEST(RequestPrice, TheMeanSoFarConvergesOnTheWorkloadsMean) {
  RequestPrices p;
  p.gpu_usd_per_s = 1;
  p.replica = round_roofline();
  const RequestPricer pricer(p);
  // The first request is priced at its own shape: 1 request of 500/1000 takes 2.5 s.
  EXPECT_NEAR(pricer.price({0, 500, 1000, 0, true}).d_usd, 2.5, 1e-9);
  // The same shape again: the mean has not moved.
  EXPECT_NEAR(pricer.price({0, 500, 1000, 0, true}).d_usd, 2.5, 1e-9);
  // 250/500 then 750/1500: the mean is back at 500/1000, whose rates price the last one:
  // 750 x 1e-6 + 1500 x 0.0024995 = 3.75 s.
  (void)pricer.price({0, 250, 500, 0, true});
  EXPECT_NEAR(pricer.price({0, 750, 1500, 0, true}).d_usd, 3.75, 1e-9);
}

TEST(RequestPrice, WithoutAProfileDIsTheMeasuredShareOfTheEnginesTime) {
  RequestPrices p;
  p.gpu_usd_per_s = 6.88 / 3600;  // an H100 at $6.88/h
  const RequestPricer pricer(p);
  // 3 s of decode shared with two others throughout: a share of 1 s.
  EXPECT_DOUBLE_EQ(pricer.price({0, 100, 200, 1.0, true}).d_usd, 6.88 / 3600);
}

TEST(RequestPrice, ThePricesAreFoundInThePresetsAndNamed) {
  RequestPriceSpec spec;
  spec.engine.profiles_dir = std::string(OVERHEAD_DATA_DIR) + "/profiles";
  spec.cpu_instance = "m7i.large";
  spec.engine.gpu = "h100-sxm";
  spec.engine.model = "llama-3.1-8b";
  const RequestPrices p = find_request_prices(spec);
  EXPECT_DOUBLE_EQ(p.cpu_usd_per_s, 0.1008 / 2 / 3600);
  EXPECT_DOUBLE_EQ(p.gpu_usd_per_s, 6.88 / 3600);
  ASSERT_TRUE(p.replica.has_value());
  EXPECT_NE(p.source.find("cpu: m7i.large $0.1008/h / 2 vCPUs"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("gpu: h100-sxm $6.88/h"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("D from the profile"), std::string::npos) << p.source;

  RequestPriceSpec share;
  share.engine.profiles_dir = spec.engine.profiles_dir;
  share.engine.gpu_usd_per_hour = 2.99;
  share.cpu_usd_per_vcpu_hour = 0.05;
  const RequestPrices q = find_request_prices(share);
  EXPECT_FALSE(q.replica.has_value());
  EXPECT_DOUBLE_EQ(q.gpu_usd_per_s, 2.99 / 3600);
  EXPECT_NE(q.source.find("measured share"), std::string::npos) << q.source;
  EXPECT_NE(q.source.find("$0.05/h per vCPU"), std::string::npos) << q.source;

  RequestPriceSpec none;
  EXPECT_FALSE(none.any());
  RequestPriceSpec both = share;
  both.cpu_instance = "m7i.large";
  EXPECT_THROW((void)find_request_prices(both), CostError);
  RequestPriceSpec no_vcpus = share;
  no_vcpus.cpu_usd_per_vcpu_hour = -1;
  no_vcpus.cpu_instance = "h100-sxm";  // a GPU preset: no vCPUs to divide by
  EXPECT_THROW((void)find_request_prices(no_vcpus), CostError);
  RequestPriceSpec model_alone;
  model_alone.engine.profiles_dir = spec.engine.profiles_dir;
  model_alone.engine.model = "llama-3.1-8b";
  EXPECT_THROW((void)find_request_prices(model_alone), CostError);
}

}  // namespace
}  // namespace overhead::cost
