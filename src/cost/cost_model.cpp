#include "cost/cost_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <exception>
#include <stdexcept>
#include <nlohmann/json.hpp>

#include "cost/fits_select.hpp"
#include "cost/json_file.hpp"
#include "cost/sim_statistics.hpp"

namespace overhead::cost {
namespace {

double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

namespace {

// The whole of `text` as one finite number, else nullopt ("1e", "nan", "2x" are not).
std::optional<double> finite_number(const std::string& text) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::pair<double, double> parse_number_pair(const std::string& text, const char* what) {
  // Exactly two finite numbers: "1,2,3" must not lose its third value silently.
  const auto comma = text.find(',');
  const auto a = comma == std::string::npos ? std::nullopt : finite_number(text.substr(0, comma));
  const auto b = comma == std::string::npos ? std::nullopt : finite_number(text.substr(comma + 1));
  if (!a || !b)
    throw CostError(std::string(what) + " wants exactly two finite numbers separated by a comma, got \"" + text + "\"");
  return {*a, *b};
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
    const auto parsed = finite_number(part.substr(eq + 1));
    if (!parsed || *parsed < 1 || *parsed > 10'000'000)
      throw CostError("--workload: \"" + part + "\" is not a token count in 1..10000000");
    const double value = *parsed;
    if (key == "in") in = value;
    else if (key == "out") out = value;
    else throw CostError("--workload: unknown key \"" + key + "\" (in, out)");
  }
  if (in < 0 || out < 0) throw CostError("--workload needs in=N and out=M, both >= 1");
  return {{in}, {out}};
}

void check_e(const ELinear& e, const Workload& w, const std::string& flag) {
  for (const double x : w.input_tokens) {
    const double us = e.at(x);
    if (!(us >= 0) || !std::isfinite(us))
      throw CostError(flag + ": E(x) = " + std::to_string(e.alpha_us) + " + " + std::to_string(e.beta_us_per_token) +
                      " x us is " + std::to_string(us) + " us at " + std::to_string(static_cast<long long>(x)) +
                      " input tokens: E is a time, it must be >= 0");
  }
}

namespace {

nlohmann::json read_fits(const std::string& fits_file) {
  nlohmann::json j = read_json_file(fits_file);
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

ELinear choose_e(const std::string& e_us, const std::vector<std::string>& fits, const std::string& backend,
                 int case_number, const std::string& tokenizer) {
  if (!e_us.empty()) {
    const auto [a, b] = parse_number_pair(e_us, "--e-us");
    return {a, b, "typed in"};
  }
  if (!fits.empty()) return e_from_fits(select_fits(fits, backend, case_number), case_number, tokenizer);
  if (!backend.empty()) throw CostError("--backend needs --fits (one fits.json per backend)");
  return {0, 0, "none given (E = 0)"};
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
  if (in.mode == LoadMode::utilization && (!(in.utilization > 0) || in.utilization > 1))
    throw CostError("--utilization must be in (0, 1]");
  if (in.mode == LoadMode::concurrency && !(in.concurrency > 0)) throw CostError("--concurrency must be > 0");
  if (in.replicas < 1) throw CostError("the fleet needs at least one replica (--gpus / --tp)");
  check_e(in.e, w, "E (" + in.e.origin + ")");
  CostResult r;
  r.mean_input_tokens = mean(w.input_tokens);
  r.mean_output_tokens = mean(w.output_tokens);
  // The largest request must fit on its own (a refusal names the memory); the steady state runs
  // at the mean request, its batch sized by what the draws hold in flight (length_mix: the long
  // requests hold their slots longer, so they are more of the running batch than of the draws).
  double largest = 0;
  for (std::size_t i = 0; i < w.input_tokens.size(); ++i)
    largest = std::max(largest, w.input_tokens[i] + std::max(1.0, w.output_tokens[i]));
  concurrency_limit(in.gpu, largest);
  const LengthMix mix = length_mix(in.gpu, w.input_tokens, w.output_tokens);
  r.batch_limit = concurrency_limit(in.gpu, mix.held_tokens);
  const SteadyState full = steady_state(in.gpu, r.batch_limit, mix, true);
  const double replicas = in.replicas;
  // The most one replica serves: the steady state's at the batch limit, unless a preempting
  // engine's simulated capacity is less (CostInputs::replica_capacity_requests_per_s).
  const bool capped = in.replica_capacity_requests_per_s && *in.replica_capacity_requests_per_s < full.requests_per_s;
  const double full_rate = capped ? *in.replica_capacity_requests_per_s : full.requests_per_s;
  SteadyState at;
  switch (in.mode) {
    case LoadMode::utilization:
      at = steady_state_at_rate(in.gpu, full_rate * in.utilization, mix);
      r.utilization = in.utilization;
      break;
    case LoadMode::max_throughput:
      at = capped ? steady_state_at_rate(in.gpu, full_rate, mix) : steady_state(in.gpu, r.batch_limit, mix, false);
      r.utilization = 1;
      break;
    case LoadMode::concurrency:
      at = steady_state(in.gpu, in.concurrency / replicas, mix, false);
      // Past what the KV holds the engine preempts; below it, it runs as the steady state says.
      if (capped && in.concurrency / replicas > r.batch_limit && at.requests_per_s > full_rate)
        at = steady_state_at_rate(in.gpu, full_rate, mix);
      break;
  }
  // The capacity is the most a replica serves: at its batch limit, unless fewer requests at once
  // serve more (on a measured CPU engine one client with 768-token prompts out-ran eight, whose
  // long prompts' attention does not batch). It was the batch limit's alone, and a concurrency
  // above it was priced, and its rate printed, at the limit's.
  const double capacity = std::max(full_rate, at.requests_per_s);  // one replica
  r.capacity_requests_per_s = capacity * replicas;
  if (in.mode == LoadMode::concurrency) r.utilization = at.requests_per_s / capacity;
  r.batch = at.sequences;
  r.prefill_bound = at.prefill_bound;

  const std::size_t n = w.input_tokens.size();
  // What a request waits beyond its own prefill steps (the boundary, or a closed loop's queue).
  const double extra_wait = at.ttft_s - at.prefill_s;
  const double mean_chunks = std::ceil(std::max(1.0, r.mean_input_tokens) / in.gpu.prefill_chunk_tokens);
  std::vector<double> e(n), d(n), t(n), ttft(n), tpot(n, at.tpot_s);
  for (std::size_t i = 0; i < n; ++i) {
    e[i] = in.e.at(w.input_tokens[i]) / 1e6;
    const double chunks = std::ceil(std::max(1.0, w.input_tokens[i]) / in.gpu.prefill_chunk_tokens);
    const double first = at.prefill_s * chunks / mean_chunks + extra_wait;
    d[i] = first + (std::max(1.0, w.output_tokens[i]) - 1) * at.tpot_s;
    ttft[i] = e[i] + first;
    t[i] = e[i] + d[i];
  }
  r.e_s = summarize(e);
  r.d_s = summarize(d);
  r.t_s = summarize(t);
  r.ttft_s = summarize(ttft);
  r.tpot_s = summarize(tpot);
  r.itl_s = {at.step_s, at.itl_p50_s, at.itl_p95_s, at.itl_p99_s};
  r.e_share = r.e_s.mean / r.t_s.mean;

  r.requests_per_s = capacity * r.utilization * replicas;
  r.input_tokens_per_s = r.requests_per_s * r.mean_input_tokens;
  r.output_tokens_per_s = r.requests_per_s * r.mean_output_tokens;
  r.cpu_workers = r.requests_per_s * r.e_s.mean;

  const double gpu_usd_full = in.gpu_usd_per_hour * in.gpu.gpus / 3600.0 / capacity;  // at U = 1
  const double cpu_usd = in.cpu_usd_per_hour / 3600.0 * r.e_s.mean;
  r.usd_per_request = gpu_usd_full / r.utilization + cpu_usd;
  const double tokens = r.mean_input_tokens + r.mean_output_tokens;
  r.usd_per_1m_input_tokens = r.mean_input_tokens > 0 ? r.usd_per_request / r.mean_input_tokens * 1e6 : 0;
  r.usd_per_1m_output_tokens = r.mean_output_tokens > 0 ? r.usd_per_request / r.mean_output_tokens * 1e6 : 0;
  r.usd_per_1m_tokens_blended = tokens > 0 ? r.usd_per_request / tokens * 1e6 : 0;
  r.break_even_api_price = r.usd_per_1m_tokens_blended;
  // A profile of next to no bandwidth or compute passes every field's own check and still gives a
  // step of infinite length: no price is better than inf or NaN in a table.
  if (!(capacity > 0) || !std::isfinite(capacity) || !std::isfinite(r.usd_per_request) || !std::isfinite(r.t_s.p99))
    throw CostError("the GPU and model profiles give no finite step time (capacity " + std::to_string(capacity) +
                    " requests/s per replica): check the GPU profile's bandwidth and compute");

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
