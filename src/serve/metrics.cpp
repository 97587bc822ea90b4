#include "serve/metrics.hpp"

#include <algorithm>
#include <cstdio>

namespace overhead::serve {
namespace {

void add(std::array<std::uint64_t, Metrics::kBuckets.size() + 1>& counts, double& sum, std::uint64_t& count, double seconds) {
  const auto bucket = std::lower_bound(Metrics::kBuckets.begin(), Metrics::kBuckets.end(), seconds) - Metrics::kBuckets.begin();
  ++counts[static_cast<std::size_t>(bucket)];
  sum += seconds;
  ++count;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

bool Metrics::is_timed(std::string_view route) { return route.substr(0, 4) == "/v1/"; }

void Metrics::record(std::string_view route, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(route), status}];
  if (seconds < 0 || !is_timed(route)) return;
  Histogram& h = latency_[std::string(route)];
  add(h.counts, h.sum, h.count, seconds);
}

void Metrics::record_stage(std::string_view stage, double seconds) {
  if (seconds < 0) return;
  std::lock_guard lock(mutex_);
  Histogram& h = stages_[std::string(stage)];
  add(h.counts, h.sum, h.count, seconds);
}

void Metrics::count_engine_prompt(const std::string& tokenizer, bool mismatch) {
  std::lock_guard lock(mutex_);
  PromptCheck& c = engine_prompts_[tokenizer];
  ++c.checked;
  if (mismatch) ++c.mismatched;
}

void Metrics::append_histogram(std::string& out, const std::string& name, const char* label, const std::string& value,
                               const Histogram& h) {
  const std::string l = std::string(label) + "=\"" + value + "\"";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += h.counts[i];
    out += name + "_bucket{" + l + ",le=\"" + number(kBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
  out += name + "_sum{" + l + "} " + number(h.sum) + "\n";
  out += name + "_count{" + l + "} " + std::to_string(h.count) + "\n";
}

std::string Metrics::exposition() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP overhead_http_requests_total HTTP requests answered, by route and status.\n";
  out += "# TYPE overhead_http_requests_total counter\n";
  for (const auto& [key, n] : requests_)
    out += "overhead_http_requests_total{route=\"" + key.first + "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  out += "# HELP overhead_http_request_duration_seconds Time from routing to the answer written, by route.\n";
  out += "# TYPE overhead_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) append_histogram(out, "overhead_http_request_duration_seconds", "route", route, h);
  out += "# HELP overhead_stage_duration_seconds Pipeline stages of chat requests: queue (sent to taken up), render, encode, publish (encoded to the reply back at the gateway), total (sent to reply).\n";
  out += "# TYPE overhead_stage_duration_seconds histogram\n";
  for (const auto& [stage, h] : stages_) append_histogram(out, "overhead_stage_duration_seconds", "stage", stage, h);
  out += "# HELP overhead_http_requests_in_flight Requests admitted and not yet answered.\n";
  out += "# TYPE overhead_http_requests_in_flight gauge\n";
  out += "overhead_http_requests_in_flight " + std::to_string(in_flight()) + "\n";
  out += "# HELP overhead_engine_prompt_tokens_checked_total Answers whose engine said how many prompt tokens it read (usage.prompt_tokens), by the item's tokenizer.\n";
  out += "# TYPE overhead_engine_prompt_tokens_checked_total counter\n";
  for (const auto& [tokenizer, c] : engine_prompts_)
    out += "overhead_engine_prompt_tokens_checked_total{tokenizer=\"" + tokenizer + "\"} " + std::to_string(c.checked) + "\n";
  out += "# HELP overhead_engine_prompt_token_mismatches_total Of those, the answers whose engine read another number of prompt tokens than was sent: the engine's tokenizer is not the item's.\n";
  out += "# TYPE overhead_engine_prompt_token_mismatches_total counter\n";
  for (const auto& [tokenizer, c] : engine_prompts_)
    out += "overhead_engine_prompt_token_mismatches_total{tokenizer=\"" + tokenizer + "\"} " + std::to_string(c.mismatched) + "\n";
  out += "# HELP overhead_special_token_refusals_total Chat requests refused because a message held special-token text (--special-tokens-in-content refuse).\n";
  out += "# TYPE overhead_special_token_refusals_total counter\n";
  out += "overhead_special_token_refusals_total " + std::to_string(special_token_refusals_.load(std::memory_order_relaxed)) + "\n";
  return out;
}

}  // namespace overhead::serve
