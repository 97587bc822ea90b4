// Synthetic records with a known cost model, for the report tests and the analysis benchmark:
// each item costs alpha + beta*tokens (+ a batch round trip at every turnover) plus noise, and
// the stamps are laid on each worker's timeline as the pipeline lays them.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ports/record.hpp"

// GCC 12 reports a false -Wrestrict inside std::string assignment when it inlines this function
// (GCC bug 105329); nothing here overlaps.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace overhead::testing {

struct GeneratorOptions {
  std::size_t items_per_tokenizer = 1000;
  std::vector<std::string> tokenizers = {"gemma-2-27b-it", "llama-3.3-70b-instruct", "phi-4"};
  std::vector<int> cases = {5};
  int workers = 1;
  int batch = 10;
  double alpha_us = 40, beta_us = 0.05, turnover_us = 900, noise_us = 5;
  bool api_input = true;
  std::uint64_t seed = 42;
};

inline std::vector<ports::Record> generate_records(const GeneratorOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::lognormal_distribution<double> tokens_dist(5.5, 1.0);
  std::exponential_distribution<double> noise(1.0 / o.noise_us);
  std::vector<ports::Record> out;
  out.reserve(o.items_per_tokenizer * o.tokenizers.size() * o.cases.size());
  for (int c : o.cases) {
    const std::string experiment = std::string("exp-case").append(std::to_string(c));
    std::vector<std::int64_t> clock(static_cast<std::size_t>(o.workers), 1'000'000'000);
    std::vector<std::int64_t> seq(static_cast<std::size_t>(o.workers), 0);
    std::size_t k = 0;
    for (const auto& tok : o.tokenizers) {
      for (std::size_t i = 0; i < o.items_per_tokenizer; ++i, ++k) {
        const auto w = static_cast<std::size_t>(k % static_cast<std::size_t>(o.workers));
        ports::Record r;
        r.experiment = experiment;
        r.tokenizer = tok;
        r.experiment_tokenizer = std::string(experiment).append("#").append(tok);
        r.id = std::string("q").append(std::to_string(i));
        r.model = "m";
        r.case_number = c;
        r.worker = std::string("w").append(std::to_string(w));
        r.seq = seq[w]++;
        r.batch = r.seq / o.batch;
        r.batch_boundary = r.seq % o.batch == 0;
        r.token_count = static_cast<std::int64_t>(std::round(tokens_dist(rng))) + 1;
        if (o.api_input) r.api_input = r.token_count - 7;
        const double cost_us = o.alpha_us + o.beta_us * static_cast<double>(r.token_count) + noise(rng);
        // The receive round trip falls before a boundary item is in hand: in the previous cycle.
        if (r.batch_boundary && r.seq > 0) clock[w] += static_cast<std::int64_t>(o.turnover_us * 1000);
        const std::int64_t t0 = clock[w];
        const auto ns = static_cast<std::int64_t>(cost_us * 1000);
        r.received = t0;
        r.render_start = t0 + ns / 20;
        r.render_end = t0 + ns / 2;
        r.encode_end = t0 + ns * 8 / 10;
        r.publish_start = t0 + ns * 85 / 100;
        r.publish_acked = t0 + ns;
        clock[w] = t0 + ns;
        out.push_back(std::move(r));
      }
    }
  }
  return out;
}

}  // namespace overhead::testing

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
