// Per-key counters for GET /metrics and the dashboard's table: requests by outcome (admitted, or
// refused by requests, tokens, budget, model), prompt and completion tokens, and cost in USD.
// Cardinality is bounded: the first `max_keys` key names seen get their own label (default 100),
// every later one is counted under key="_other", so a gateway with many keys cannot grow a
// scrape without bound. Names only: a secret never reaches a label.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace overhead::serve {

struct KeyCounters {
  std::uint64_t admitted = 0;
  std::uint64_t refused_requests = 0;
  std::uint64_t refused_tokens = 0;
  std::uint64_t refused_budget = 0;
  std::uint64_t refused_model = 0;
  std::uint64_t answered = 0;
  std::uint64_t prompt_tokens = 0;
  std::uint64_t completion_tokens = 0;
  double cost_usd = 0;
};

class KeyMetrics {
 public:
  static constexpr std::string_view kOtherKeys = "_other";
  explicit KeyMetrics(std::size_t max_keys = 100) : max_keys_(max_keys) {}

  // `outcome`: "admitted" or the refusal ("requests", "tokens", "budget", "model").
  void count_admission(const std::string& key, std::string_view outcome);
  void count_answer(const std::string& key, std::int64_t prompt_tokens, std::int64_t completion_tokens, double cost_usd);
  [[nodiscard]] std::map<std::string, KeyCounters> snapshot() const;
  [[nodiscard]] std::string exposition() const;

 private:
  KeyCounters& slot(const std::string& key);  // under mutex_

  std::size_t max_keys_;
  mutable std::mutex mutex_;
  std::map<std::string, KeyCounters> by_key_;
};

}  // namespace overhead::serve
