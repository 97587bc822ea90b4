#include "cost/cost_model.hpp"

#include <exception>
#include <fstream>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "cost/fits_select.hpp"
#include "stats/quantile.hpp"

namespace overhead::cost {
namespace {

Percentiles percentiles(const std::vector<double>& v) {
  const double qs[] = {0.5, 0.95, 0.99};
  const auto q = stats::quantiles(v, qs);
  double sum = 0;
  for (double x : v) sum += x;
  return {sum / static_cast<double>(v.size()), q[0], q[1], q[2]};
}

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

std::pair<double, double> parse_number_pair(const std::string& text, const char* what) {
  const auto comma = text.find(',');
  try {
    if (comma == std::string::npos) throw std::invalid_argument("no comma");
    return {std::stod(text.substr(0, comma)), std::stod(text.substr(comma + 1))};
  } catch (const std::exception&) {
    throw CostError(std::string(what) + " wants two numbers separated by a comma, got \"" + text + "\"");
  }
}

Workload parse_workload(const std::string& text) {
  double in = -1, out = -1;
  std::string rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string part = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const auto eq = part.find('=');
    if (eq == std::string::npos) throw CostError("--workload: expected in=N,out=M, got \"" + text + "\"");
    const std::string key = part.substr(0, eq);
    double value = 0;
    try {
      value = std::stod(part.substr(eq + 1));
    } catch (const std::exception&) {
      throw CostError("--workload: \"" + part + "\" is not a number");
    }
    if (key == "in") in = value;
    else if (key == "out") out = value;
    else throw CostError("--workload: unknown key \"" + key + "\" (in, out)");
  }
  if (in < 0 || out < 0) throw CostError("--workload needs in=N and out=M, both >= 0");
  return {{in}, {out}};
}

namespace {

nlohmann::json read_fits(const std::string& fits_file) {
  std::ifstream in(fits_file);
  if (!in) throw CostError(fits_file + ": cannot open");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw CostError(fits_file + ": " + e.what());
  }
  if (!j.contains("fits") || !j["fits"].is_array()) throw CostError(fits_file + ": missing array \"fits\"");
  return j;
}

}  // namespace

std::vector<std::pair<std::string, EBatch>> e_batch_from_fits(const std::string& fits_file, int case_number) {
  const nlohmann::json j = read_fits(fits_file);
  std::vector<std::pair<std::string, EBatch>> out;
  for (const auto& f : j["fits"]) {
    if (f.value("case", -1) != case_number || f.value("target", "") != "cycle" || f.value("model", "") != "b" ||
        f.value("method", "") != "ols" || !f.contains("coefficients"))
      continue;
    EBatch e;
    for (const auto& c : f["coefficients"]) {
      const std::string name = c.value("name", "");
      const double v = c["estimate"].is_number() ? c["estimate"].get<double>() : 0.0;
      if (name == "const") e.alpha_us = v;
      else if (name == "turnover") e.turnover_us = v;
      else if (name == "tokens") e.beta_us_per_token = v;
    }
    const std::string tokenizer = f.value("tokenizer", "");
    e.origin = fits_file + ": case " + std::to_string(case_number) + ", " + tokenizer + ", OLS on cycle with the turnover term";
    out.emplace_back(tokenizer, e);
  }
  if (out.empty())
    throw CostError(fits_file + ": no OLS cycle fit with the turnover term (model b) for case " + std::to_string(case_number));
  return out;
}

ELinear e_from_fits(const std::string& fits_file, int case_number, const std::string& tokenizer) {
  const nlohmann::json j = read_fits(fits_file);
  for (const auto& f : j["fits"]) {
    if (f.value("case", -1) != case_number || f.value("target", "") != "cycle" || f.value("model", "") != "a" ||
        f.value("method", "") != "ols")
      continue;
    if (!tokenizer.empty() && f.value("tokenizer", "") != tokenizer) continue;
    if (!f.contains("coefficients")) continue;  // a fit that failed carries "error" instead
    ELinear e;
    for (const auto& c : f["coefficients"]) {
      if (c.value("name", "") == "const") e.alpha_us = c.value("estimate", 0.0);
      if (c.value("name", "") == "tokens") e.beta_us_per_token = c.value("estimate", 0.0);
    }
    e.origin = fits_file + ": case " + std::to_string(case_number) + ", " + f.value("tokenizer", "") + ", OLS on cycle";
    return e;
  }
  throw CostError("no OLS cycle fit for case " + std::to_string(case_number) +
                  (tokenizer.empty() ? std::string() : " and tokenizer " + tokenizer) + " in " + describe(fits_holding(fits_file)));
}

CostResult compute_cost(const CostInputs& in, const Workload& w) {
  if (w.input_tokens.empty() || w.input_tokens.size() != w.output_tokens.size())
    throw CostError("the workload needs at least one request with input and output token counts");
  if (!(in.utilization > 0) || in.utilization > 1) throw CostError("--utilization must be in (0, 1]");
  CostResult r;
  r.mean_input_tokens = mean(w.input_tokens);
  r.mean_output_tokens = mean(w.output_tokens);
  r.batch = concurrency_limit(in.gpu, r.mean_input_tokens + r.mean_output_tokens);

  const std::size_t n = w.input_tokens.size();
  std::vector<double> e(n), d(n), t(n), gpu_share(n);
  for (std::size_t i = 0; i < n; ++i) {
    e[i] = in.e.at(w.input_tokens[i]) / 1e6;
    d[i] = request_seconds(in.gpu, w.input_tokens[i], w.output_tokens[i], r.batch);
    t[i] = e[i] + d[i];
    gpu_share[i] = amortized_gpu_seconds(in.gpu, w.input_tokens[i], w.output_tokens[i], r.batch);
  }
  r.e_s = percentiles(e);
  r.d_s = percentiles(d);
  r.t_s = percentiles(t);
  r.e_share = r.e_s.mean / r.t_s.mean;

  const double capacity = 1.0 / mean(gpu_share);
  r.requests_per_s = capacity * in.utilization;
  r.input_tokens_per_s = r.requests_per_s * r.mean_input_tokens;
  r.output_tokens_per_s = r.requests_per_s * r.mean_output_tokens;
  r.cpu_workers = r.requests_per_s * r.e_s.mean;

  const double gpu_usd_full = in.gpu_usd_per_hour * in.gpu.gpus / 3600.0 / capacity;  // at U = 1
  const double cpu_usd = in.cpu_usd_per_hour / 3600.0 * r.e_s.mean;
  r.usd_per_request = gpu_usd_full / in.utilization + cpu_usd;
  const double tokens = r.mean_input_tokens + r.mean_output_tokens;
  r.usd_per_1m_input_tokens = r.mean_input_tokens > 0 ? r.usd_per_request / r.mean_input_tokens * 1e6 : 0;
  r.usd_per_1m_output_tokens = r.mean_output_tokens > 0 ? r.usd_per_request / r.mean_output_tokens * 1e6 : 0;
  r.usd_per_1m_tokens_blended = tokens > 0 ? r.usd_per_request / tokens * 1e6 : 0;
  r.break_even_api_price = r.usd_per_1m_tokens_blended;

  if (in.api_usd_per_1m) {
    const auto [p_in, p_out] = *in.api_usd_per_1m;
    const double api_per_request = (r.mean_input_tokens * p_in + r.mean_output_tokens * p_out) / 1e6;
    r.api_usd_per_1m_tokens_blended = tokens > 0 ? api_per_request / tokens * 1e6 : 0;
    // gpu_usd_full / U + cpu_usd = api_per_request; above 1 means the API is cheaper at any load.
    if (api_per_request > cpu_usd) r.break_even_utilization = gpu_usd_full / (api_per_request - cpu_usd);
  }
  return r;
}

}  // namespace overhead::cost
