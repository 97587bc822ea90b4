#include "backends/key_store_rows.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

#include "ports/errors.hpp"
#include "util/json_writer.hpp"

namespace overhead::backends {

using ports::Failure;
using ports::StoreError;
using ports::UsageBucket;

std::string key_models_json(const std::vector<std::string>& models) {
  std::string out = "[";
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (i) out += ',';
    util::append_json_string(out, models[i]);
  }
  return out + "]";
}

std::vector<std::string> key_models_from_json(std::string_view text, const std::string& where) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  std::vector<std::string> out;
  if (j.is_array()) {
    for (const auto& m : j) {
      if (!m.is_string()) break;
      out.push_back(m.get<std::string>());
    }
    if (out.size() == j.size()) return out;
  }
  throw StoreError(where + ": models is not a JSON array of strings: " + std::string(text.substr(0, 80)), Failure::permanent);
}

double real_from_text(std::string_view text, const std::string& where) {
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
    throw StoreError(where + ": not a number: " + std::string(text.substr(0, 40)), Failure::permanent);
  return v;
}

ports::KeyUsage key_usage_from_buckets(const std::string& key, std::vector<UsageBucket> by_model,
                                       std::vector<UsageBucket> by_day) {
  const auto by_label = [](const UsageBucket& a, const UsageBucket& b) { return a.label < b.label; };
  std::sort(by_model.begin(), by_model.end(), by_label);
  std::sort(by_day.begin(), by_day.end(), by_label);
  ports::KeyUsage u;
  u.key = key;
  for (const auto& b : by_model) {
    u.requests += b.requests;
    u.prompt_tokens += b.prompt_tokens;
    u.completion_tokens += b.completion_tokens;
    u.cost_usd += b.cost_usd;
  }
  u.by_model = std::move(by_model);
  u.by_day = std::move(by_day);
  return u;
}

}  // namespace overhead::backends
