#include "serve/key_metrics.hpp"

#include <algorithm>
#include <cstdio>

namespace overhead::serve {

KeyCounters& KeyMetrics::slot(const std::string& key) {
  if (const auto it = by_key_.find(key); it != by_key_.end()) return it->second;
  const std::size_t named = by_key_.size() - by_key_.count(std::string(kOtherKeys));
  if (named >= max_keys_) return by_key_[std::string(kOtherKeys)];
  return by_key_[key];
}

void KeyMetrics::count_admission(const std::string& key, std::string_view outcome) {
  std::lock_guard lock(mutex_);
  KeyCounters& c = slot(key);
  if (outcome == "admitted") ++c.admitted;
  else if (outcome == "requests") ++c.refused_requests;
  else if (outcome == "tokens") ++c.refused_tokens;
  else if (outcome == "budget") ++c.refused_budget;
  else ++c.refused_model;
}

void KeyMetrics::count_answer(const std::string& key, std::int64_t prompt_tokens, std::int64_t completion_tokens, double cost_usd) {
  std::lock_guard lock(mutex_);
  KeyCounters& c = slot(key);
  ++c.answered;
  c.prompt_tokens += static_cast<std::uint64_t>(std::max<std::int64_t>(prompt_tokens, 0));
  c.completion_tokens += static_cast<std::uint64_t>(std::max<std::int64_t>(completion_tokens, 0));
  c.cost_usd += cost_usd;
}

std::map<std::string, KeyCounters> KeyMetrics::snapshot() const {
  std::lock_guard lock(mutex_);
  return by_key_;
}

std::string KeyMetrics::exposition() const {
  const auto keys = snapshot();
  if (keys.empty()) return {};
  std::string out;
  // Key names are [A-Za-z0-9._-] (overhead keys create checks), so they need no escaping; a quote
  // or backslash is escaped all the same.
  const auto label = [](const std::string& k) {
    std::string s;
    for (const char ch : k) {
      if (ch == '"' || ch == '\\') s += '\\';
      if (ch == '\n') {
        s += "\\n";
        continue;
      }
      s += ch;
    }
    return s;
  };
  out += "# HELP overhead_key_requests_total Requests per API key by admission outcome.\n";
  out += "# TYPE overhead_key_requests_total counter\n";
  for (const auto& [k, c] : keys) {
    const std::string l = "overhead_key_requests_total{key=\"" + label(k) + "\",outcome=\"";
    out += l + "admitted\"} " + std::to_string(c.admitted) + "\n";
    out += l + "refused_requests\"} " + std::to_string(c.refused_requests) + "\n";
    out += l + "refused_tokens\"} " + std::to_string(c.refused_tokens) + "\n";
    out += l + "refused_budget\"} " + std::to_string(c.refused_budget) + "\n";
    out += l + "refused_model\"} " + std::to_string(c.refused_model) + "\n";
  }
  out += "# HELP overhead_key_tokens_total Tokens of the answered requests per API key.\n";
  out += "# TYPE overhead_key_tokens_total counter\n";
  for (const auto& [k, c] : keys) {
    out += "overhead_key_tokens_total{key=\"" + label(k) + "\",kind=\"prompt\"} " + std::to_string(c.prompt_tokens) + "\n";
    out += "overhead_key_tokens_total{key=\"" + label(k) + "\",kind=\"completion\"} " + std::to_string(c.completion_tokens) + "\n";
  }
  out += "# HELP overhead_key_cost_usd_total Priced cost of the answered requests per API key (E + D, USD).\n";
  out += "# TYPE overhead_key_cost_usd_total counter\n";
  for (const auto& [k, c] : keys) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", c.cost_usd);
    out += "overhead_key_cost_usd_total{key=\"" + label(k) + "\"} " + buf + "\n";
  }
  return out;
}

}  // namespace overhead::serve
