// One request's price, from what was measured on it: cost_usd = E + D, where
//   E = its CPU time on the worker (thread CPU time of the worker's own stages) x the price of a
//       vCPU-second (an instance preset's $/h over its vCPUs, or a $/h typed in);
//   D = its share of the GPU x the GPU's $/s. With an engine profile (--engine-profile, or --gpu and
//       --model): the server model's GPU time per request at the engine's capacity for the mean
//       request (as `overhead cost --max-throughput` prices the mean request of a workload: the
//       replica's seconds over its requests per second), split into a part per prompt token (what
//       the prompts add to the steps they ride in) and a part per output token (the rest), and the
//       request charged its own tokens at those two rates. So the requests of a workload sum to
//       what `cost` prices it at, and a long request pays more than a short one. The mean request
//       is that of the requests priced so far, or one given (--price-workload in=N,out=M). Without
//       a profile: its measured share of the engine's time (the decode time divided among the
//       generations in flight at once).
// Nothing is guessed: a side without a price is 0, and the source says which prices were given.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "cost/cost_model.hpp"
#include "cost/scenario.hpp"

namespace overhead::cost {

// The prices a worker is given (its --price-* flags, and --engine-profile, --gpu and --model as
// `overhead cost` takes them).
struct RequestPriceSpec {
  // D: the GPU. engine.gpu and engine.model (a datasheet GPU and a model profile), or
  // engine.engine_profile (`overhead calibrate`'s), give the profile; engine.gpu alone gives only
  // the GPU's price preset. engine.gpu_usd_per_hour >= 0 is the GPU's price typed in (per GPU).
  ScenarioSpec engine;
  // E: the worker's CPU: an instance preset of data/profiles/price/prices.json (its $/h over its
  // "vcpus"), or the $ per vCPU-hour typed in (>= 0). One of the two, or neither.
  std::string cpu_instance;
  double cpu_usd_per_vcpu_hour = -1;
  // With a profile: the request shape whose capacity sets the rates ("in=N,out=M", as `cost
  // --workload`); empty: the mean of the requests priced so far.
  std::string reference_workload;

  // Any price at all: without one, requests are not priced (their cost fields stay 0).
  [[nodiscard]] bool any() const {
    return !cpu_instance.empty() || cpu_usd_per_vcpu_hour >= 0 || !engine.gpu.empty() || !engine.model.empty() ||
           !engine.engine_profile.empty() || engine.gpu_usd_per_hour >= 0;
  }
};

// What one request used, as the worker measured it.
struct RequestUse {
  double cpu_s = 0;            // thread CPU time of the worker's own stages of the item
  double input_tokens = 0;     // the prompt as sent (our count)
  double output_tokens = 0;    // what the engine produced
  double engine_share_s = 0;   // its share of the engine's time: decode time / generations in flight
  bool decoded = false;        // a generation ran (no D without one)
};

struct RequestCost {
  double e_usd = 0, d_usd = 0;
  [[nodiscard]] double usd() const { return e_usd + d_usd; }
};

// The prices themselves, found: what the arithmetic needs and the words that say where it came from.
struct RequestPrices {
  double cpu_usd_per_s = 0;  // one vCPU
  double gpu_usd_per_s = 0;  // one replica (its tp GPUs together)
  std::optional<Roofline> replica;  // the engine profile, when D comes from one
  std::optional<std::pair<double, double>> reference;  // the mean request fixed (input, output tokens)
  std::string source;
};

// Reads the presets and profiles `spec` names. Throws CostError: an unknown preset or profile, an
// instance without its vCPUs, a profile without a GPU price, both forms of one price given.
[[nodiscard]] RequestPrices find_request_prices(const RequestPriceSpec& spec);

// GPU-seconds of one replica per prompt token and per output token at the engine's capacity for
// requests of `input` and `output` tokens (the better of the open and the closed loop at the batch
// limit, as compute_cost prices --max-throughput): the prompt's rate is what prompts add to the
// steps they ride in (the mean step less the same step without prompts, per completion), the
// output's the rest. input x per_input + output x per_output = the replica's seconds per request.
// Throws CostError when such a request does not fit the replica's memory.
struct TokenRates {
  double per_input_token_s = 0, per_output_token_s = 0;
};
[[nodiscard]] TokenRates token_rates(const Roofline& replica, double input, double output);

class RequestPricer {
 public:
  explicit RequestPricer(RequestPrices prices) : p_(std::move(prices)) {}

  // Thread-safe (the mean request is shared by the workers of a process).
  [[nodiscard]] RequestCost price(const RequestUse& use) const;

  // Where the prices came from, e.g. "cpu: m7i.large $0.1008/h / 2 vCPUs (published, AWS EC2
  // on-demand pricing, us-east-1, Linux, 2025-06); gpu: h100-sxm $6.88/h (...); D from the
  // profile ...". Written into every priced record.
  [[nodiscard]] const std::string& source() const { return p_.source; }
  [[nodiscard]] const RequestPrices& prices() const { return p_; }

 private:
  const RequestPrices p_;
  // The mean request so far, and the rates last computed (at rates_at_; nullopt: the mean request
  // does not fit, D falls back on the measured share).
  mutable std::mutex mutex_;
  mutable std::uint64_t seen_ = 0;
  mutable double input_sum_ = 0, output_sum_ = 0;
  mutable bool have_rates_ = false;
  mutable std::optional<TokenRates> rates_;
  mutable std::pair<double, double> rates_at_{0, 0};
};

}  // namespace overhead::cost
