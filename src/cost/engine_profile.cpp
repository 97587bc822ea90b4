#include "cost/engine_profile.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>

#include <Eigen/Dense>

#include "cost/json_file.hpp"

namespace overhead::cost {

namespace {

double number_at(const nlohmann::json& j, const std::string& path, const std::filesystem::path& file) {
  const nlohmann::json* at = &j;
  std::size_t from = 0;
  while (true) {
    const auto dot = path.find('.', from);
    const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!at->is_object() || !at->contains(key)) throw CostError(file.string() + ": missing field \"" + path + "\"");
    at = &(*at)[key];
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  if (!at->is_number() || !std::isfinite(at->get<double>()))
    throw CostError(file.string() + ": field \"" + path + "\" must be a finite number");
  return at->get<double>();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

double interquartile_mean(std::vector<double> v) {
  if (v.size() < 4) return v.empty() ? 0 : median(std::move(v));
  std::sort(v.begin(), v.end());
  const std::size_t cut = v.size() / 4;
  double sum = 0;
  for (std::size_t i = cut; i < v.size() - cut; ++i) sum += v[i];
  return sum / static_cast<double>(v.size() - 2 * cut);
}

namespace {

// One measured point: its regressors (the constant first) and the interquartile mean of its samples.
struct Point {
  std::vector<double> x;
  double y = 0;
};

// Least squares in relative terms: minimises the sum of ((y - fitted) / y)^2 over the points.
// Throws CostError when the design is singular (too few distinct points for the terms).
Eigen::VectorXd relative_least_squares(const std::vector<Point>& points) {
  const auto n = static_cast<Eigen::Index>(points.size());
  const auto k = static_cast<Eigen::Index>(points.front().x.size());
  Eigen::MatrixXd a(n, k);
  Eigen::VectorXd b(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& p = points[static_cast<std::size_t>(i)];
    if (!(p.y > 0) || !std::isfinite(p.y)) throw CostError("cannot fit the engine: a measured time is not positive");
    for (Eigen::Index j = 0; j < k; ++j) a(i, j) = p.x[static_cast<std::size_t>(j)] / p.y;
    b(i) = 1;
  }
  const auto qr = a.colPivHouseholderQr();
  if (qr.rank() < k) throw CostError("cannot fit the engine: the measured points do not separate the model's terms");
  return qr.solve(b);
}

double fitted(const Eigen::VectorXd& beta, const std::vector<double>& x) {
  double f = 0;
  for (std::size_t j = 0; j < x.size(); ++j) f += beta(static_cast<Eigen::Index>(j)) * x[j];
  return f;
}

// R^2 of the fit over the points (centred, unweighted).
double r_squared(const std::vector<Point>& points, const Eigen::VectorXd& beta) {
  double mean = 0;
  for (const auto& p : points) mean += p.y / static_cast<double>(points.size());
  double ss_res = 0, ss_tot = 0;
  for (const auto& p : points) {
    ss_res += std::pow(p.y - fitted(beta, p.x), 2);
    ss_tot += std::pow(p.y - mean, 2);
  }
  return ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
}

double resid_sd(const std::vector<double>& residuals, std::size_t terms) {
  double ss = 0;
  for (const double r : residuals) ss += r * r;
  return residuals.size() > terms ? std::sqrt(ss / static_cast<double>(residuals.size() - terms)) : 0;
}

void fit_prefill(const std::vector<PrefillSample>& prefill, EngineFit& fit) {
  std::map<double, std::vector<double>> by_length;
  for (const auto& s : prefill) by_length[s.prompt_tokens].push_back(s.ttft_s);
  std::vector<Point> points;
  for (const auto& [length, ttfts] : by_length) points.push_back({{1, length, length * length}, interquartile_mean(ttfts)});
  // The quadratic term needs a fourth length to be told from noise. Neither slope may be negative:
  // when the three-term fit makes one so, that term is dropped and the other fitted alone.
  const auto fit_terms = [&](bool linear, bool quadratic) {
    std::vector<Point> sub;
    for (const auto& p : points) {
      sub.push_back({{1}, p.y});
      if (linear) sub.back().x.push_back(p.x[1]);
      if (quadratic) sub.back().x.push_back(p.x[2]);
    }
    const Eigen::VectorXd b = relative_least_squares(sub);
    Eigen::Vector3d full(b(0), 0, 0);
    if (linear) full(1) = b(1);
    if (quadratic) full(2) = b(linear ? 2 : 1);
    return full;
  };
  Eigen::Vector3d beta(0, -1, -1);
  if (points.size() >= 4) beta = fit_terms(true, true);
  if (!(beta(1) >= 0 && beta(2) >= 0)) {
    const Eigen::Vector3d linear = fit_terms(true, false);
    const Eigen::Vector3d quadratic = points.size() >= 4 ? fit_terms(false, true) : Eigen::Vector3d(0, -1, -1);
    const auto ssr = [&](const Eigen::Vector3d& b) {
      double s = 0;
      for (const auto& p : points) s += std::pow((p.y - b(0) - b(1) * p.x[1] - b(2) * p.x[2]) / p.y, 2);
      return s;
    };
    beta = linear;
    if (quadratic(2) > 0 && (!(linear(1) > 0) || ssr(quadratic) < ssr(linear))) beta = quadratic;
  }
  if (!(beta(1) > 0 || beta(2) > 0))
    throw CostError("the time to first token does not grow with the prompt (slope " + std::to_string(beta(1)) +
                    " s/token): the measurements are too noisy to fit a prefill rate");
  fit.ttft_base_s = beta(0);
  fit.prefill_s_per_token = beta(1);
  fit.ttft_s_per_token_squared = beta(2);
  fit.prefill_points = points.size();
  fit.prefill_r_squared = r_squared(points, beta);
  if (!(fit.prefill_r_squared >= 0))
    throw CostError("the time to first token fit is worse than the mean (R^2 " + std::to_string(fit.prefill_r_squared) +
                    "): the measurements do not follow the server model");
  for (const auto& s : prefill) fit.prefill_residuals_s.push_back(s.ttft_s - fit.ttft_s(s.prompt_tokens));
  fit.prefill_resid_sd_s = resid_sd(fit.prefill_residuals_s, 1 + (beta(1) > 0 ? 1 : 0) + (beta(2) > 0 ? 1 : 0));
}

// A concurrency level's points: (batch, context, time) of each.
using LevelPoints = std::vector<std::array<double, 3>>;

// The least-squares line of a level's times in the context (unweighted; a negative slope, noise,
// is 0 and the line their mean), at the level's mean batch; nullopt under two contexts.
std::optional<DecodeLevel> level_line(const LevelPoints& pts) {
  if (pts.size() < 2) return std::nullopt;
  double mb = 0, mx = 0, my = 0;
  for (const auto& p : pts) {
    mb += p[0] / static_cast<double>(pts.size());
    mx += p[1] / static_cast<double>(pts.size());
    my += p[2] / static_cast<double>(pts.size());
  }
  double sxy = 0, sxx = 0;
  for (const auto& p : pts) {
    sxy += (p[1] - mx) * (p[2] - my);
    sxx += (p[1] - mx) * (p[1] - mx);
  }
  if (!(sxx > 0)) return std::nullopt;
  const double slope = std::max(0.0, sxy / sxx);
  return DecodeLevel{mb, my - slope * mx, slope};
}

// The step at each calibrated level: a lone sequence (batch under 1.5) keeps its own measured line
// (on the tests' llama.cpp engine its context costs 0.4 us a token and each of a batch's 0.9 to
// 1.2 us, so the line through every level is 13% over it at 528 tokens); each level of two or more
// sequences is the fitted line a + b batch + c batch context at its batch (the line smooths their
// noise, and interpolating between its levels reproduces it).
void fit_decode_levels(const std::map<double, LevelPoints>& by_level, EngineFit& fit) {
  DecodeTable table;
  table.at_zero_s = std::max(0.0, fit.step_overhead_s);
  for (const auto& [level, pts] : by_level) {
    const auto own = level_line(pts);
    if (!own) continue;
    if (own->batch >= 1.5)
      table.levels.push_back({own->batch, fit.step_overhead_s + fit.sequence_overhead_s * own->batch,
                              fit.context_s_per_token * own->batch});
    else
      table.levels.push_back(*own);
  }
  std::sort(table.levels.begin(), table.levels.end(), [](const auto& x, const auto& y) { return x.batch < y.batch; });
  // Two levels at the same mean batch cannot be told apart: keep the first.
  table.levels.erase(std::unique(table.levels.begin(), table.levels.end(),
                                 [](const auto& x, const auto& y) { return std::abs(x.batch - y.batch) < 1e-9; }),
                     table.levels.end());
  fit.decode_levels = table;
}

// The samples of one decode point: their times, contexts and batches.
struct DecodeSamples {
  std::vector<double> tpots, contexts, batches;
};

void fit_decode(const std::vector<DecodeSample>& decode, const std::vector<DecodeSample>& lone_decode, EngineFit& fit) {
  // A point: one concurrency level and one prompt (the context rounded to 16 tokens groups a
  // wave's generations, whose contexts differ by the few tokens their outputs differ), at the
  // median of its samples' batches and contexts and the interquartile mean of their times.
  std::map<std::pair<double, double>, DecodeSamples> by_point;
  for (const auto& s : decode) {
    auto& p = by_point[{s.level(), std::round(s.context_tokens / 16)}];
    p.tpots.push_back(s.tpot_s);
    p.contexts.push_back(s.context_tokens);
    p.batches.push_back(s.batch);
  }
  std::vector<Point> points;
  std::map<double, LevelPoints> by_level;
  for (const auto& [key, samples] : by_point) {
    const double batch = median(samples.batches), context = median(samples.contexts), tpot = interquartile_mean(samples.tpots);
    points.push_back({{1, batch, batch * context}, tpot});
    by_level[key.first].push_back({batch, context, tpot});
  }
  Eigen::VectorXd beta = relative_least_squares(points);
  // A context term below 0 is noise where the context costs next to nothing (as a level's own line
  // takes it, level_line): it is dropped and the step fitted on the batch alone, as fit_prefill
  // drops a negative term.
  if (beta(2) < 0) {
    std::vector<Point> batch_only;
    for (const auto& p : points) batch_only.push_back({{1, p.x[1]}, p.y});
    const Eigen::VectorXd b = relative_least_squares(batch_only);
    beta = Eigen::Vector3d(b(0), b(1), 0);
  }
  // A step that shrinks as sequences are added is no engine: it is what an engine that overstates
  // its usage gives (1,000,000 tokens claimed for 5 streamed made a negative slope and a negative
  // time per token, which `cost` priced at 1.8M tokens/s). An error, not a profile.
  if (beta(1) < 0)
    throw CostError("the decode step fit has a negative slope (" + std::to_string(beta(1)) +
                    " s per sequence): the step shrinks as sequences are added, the measurements are not an engine's");
  for (const auto& p : points)
    if (!(fitted(beta, p.x) > 0))
      throw CostError("the decode step fit gives a time per output token <= 0 at batch " + std::to_string(p.x[1]) +
                      ": the measurements are not an engine's");
  fit.step_overhead_s = beta(0);
  fit.sequence_overhead_s = beta(1);
  fit.context_s_per_token = beta(2);
  // The lone generations at more contexts: points of the lone level (each context, rounded to 16
  // tokens, its interquartile mean), beside the waves' lone points.
  std::map<double, DecodeSamples> lone_by_context;
  for (const auto& s : lone_decode) {
    if (!(s.tpot_s > 0 && std::isfinite(s.tpot_s))) continue;
    auto& g = lone_by_context[std::round(s.context_tokens / 16)];
    g.tpots.push_back(s.tpot_s);
    g.contexts.push_back(s.context_tokens);
  }
  for (const auto& [bucket, g] : lone_by_context) by_level[1].push_back({1, median(g.contexts), interquartile_mean(g.tpots)});
  fit_decode_levels(by_level, fit);
  fit.decode_points = points.size();
  fit.decode_r_squared = r_squared(points, beta);
  if (!(fit.decode_r_squared >= 0))
    throw CostError("the decode step fit is worse than the mean (R^2 " + std::to_string(fit.decode_r_squared) +
                    "): the measurements do not follow the server model");
  for (const auto& s : decode) fit.decode_residuals_s.push_back(s.tpot_s - fit.step_s(s.batch, s.context_tokens));
  fit.decode_resid_sd_s = resid_sd(fit.decode_residuals_s, 3);
}

// k from the interquartile mean TTFT of each (concurrency, prompt) group: TTFT - TTFT(prompt) =
// k x (C - 1) x the other's prefill step, least squares in seconds, k in [0, 1]. In seconds, not relative: the
// groups of short prompts wait a millisecond or two, as much as a shared machine's jitter, and in
// relative terms they swung k from 0.15 to 0.75 between two calibrations; the long prompts' waits
// carry the share.
void fit_queue_share(const std::vector<ConcurrentTtftSample>& concurrent, EngineFit& fit) {
  std::map<std::pair<double, double>, std::vector<double>> by_point;
  for (const auto& s : concurrent)
    if (s.concurrency >= 2 && s.ttft_s > 0 && std::isfinite(s.ttft_s)) by_point[{s.concurrency, s.prompt_tokens}].push_back(s.ttft_s);
  double xy = 0, xx = 0;
  for (const auto& [key, ttfts] : by_point) {
    const double x = (key.first - 1) * fit.other_prefill_step_s(key.first, key.second);
    xy += x * (interquartile_mean(ttfts) - fit.ttft_s(key.second));
    xx += x * x;
  }
  fit.queue_points = by_point.size();
  fit.queue_share = xx > 0 ? std::clamp(xy / xx, 0.0, 1.0) : 0;
}

}  // namespace

EngineFit fit_engine(const std::vector<PrefillSample>& prefill, const std::vector<DecodeSample>& decode,
                     const std::vector<ConcurrentTtftSample>& concurrent, const std::vector<DecodeSample>& lone_decode) {
  std::set<double> lengths;
  for (const auto& s : prefill) lengths.insert(s.prompt_tokens);
  if (lengths.size() < 3)
    throw CostError("too few prefill measurements to fit: " + std::to_string(lengths.size()) +
                    " prompt length(s), need 3 (give a longer --budget-s)");
  std::set<double> batches, contexts;
  std::set<std::pair<double, double>> points;
  for (const auto& s : decode) {
    batches.insert(s.level());
    contexts.insert(std::round(s.context_tokens / 16));
    points.insert({s.level(), std::round(s.context_tokens / 16)});
  }
  if (points.size() < 4 || batches.size() < 2 || contexts.size() < 2)
    throw CostError("too few decode measurements to fit: " + std::to_string(decode.size()) + " generation(s) over " +
                    std::to_string(batches.size()) + " concurrency level(s) and " + std::to_string(contexts.size()) +
                    " prompt length(s), need 4 points over 2 and 2 (give a longer --budget-s)");
  EngineFit fit;
  fit_prefill(prefill, fit);
  fit_decode(decode, lone_decode, fit);
  fit_queue_share(concurrent, fit);  // on the two fits above
  return fit;
}

Roofline roofline_from_profile(const EngineProfile& p) {
  Roofline r;
  r.gpus = 1;
  r.bytes_per_s = 1;
  r.flops_per_s = 1;
  r.memory_bytes = 1e300;  // unbounded: the engine's slots are the limit
  r.weight_bytes = 0;
  // A context token costs c seconds of the step; clamp a fitted negative to 0 (noise) so a step
  // never shrinks with more context.
  r.kv_bytes_per_token = std::max(0.0, p.fit.context_s_per_token);
  // The prefill rate as a time per prompt token, less the context term the bytes already charge
  // each prompt token (step_seconds counts prompt tokens' KV), so a step costs exactly
  // a + b decodes + c (decode context) + prompt tokens / rate.
  r.active_parameters = 0;
  r.prefill_s_per_token = std::max(0.0, p.fit.prefill_s_per_token - r.kv_bytes_per_token);
  // q prompt^2 over a whole prompt: its tokens attend to prompt^2 / 2 context tokens in all.
  r.prefill_s_per_context_token = 2 * std::max(0.0, p.fit.ttft_s_per_token_squared);
  // A lone prompt's step is step_overhead + its prefill; the TTFT's base beyond that step overhead
  // is spent per request outside the steps.
  r.request_overhead_s = std::max(0.0, p.fit.ttft_base_s - std::max(0.0, p.fit.step_overhead_s));
  r.attention_flops_per_context_token = 0;
  r.max_concurrency = std::max(1.0, p.max_concurrency);
  r.prefill_chunk_tokens = p.prefill_chunk_tokens;
  r.queue_share = std::clamp(p.fit.queue_share, 0.0, 1.0);
  r.memory_fraction = 1;
  r.step_overhead_s = std::max(0.0, p.fit.step_overhead_s);
  r.sequence_overhead_s = std::max(0.0, p.fit.sequence_overhead_s);
  r.decode_steps = p.fit.decode_levels;
  return r;
}

namespace {

nlohmann::json decode_levels_json(const DecodeTable& t) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& l : t.levels)
    levels.push_back({{"batch", l.batch}, {"step_s", l.step_s}, {"s_per_context_token", l.s_per_context_token}});
  return {{"at_zero_s", t.at_zero_s}, {"levels", levels}};
}

DecodeTable load_decode_levels(const nlohmann::json& j, const std::filesystem::path& file) {
  DecodeTable t;
  t.at_zero_s = number_at(j, "fit.decode_levels.at_zero_s", file);
  const auto& levels = j["fit"]["decode_levels"].value("levels", nlohmann::json());
  if (!levels.is_array()) throw CostError(file.string() + ": field \"fit.decode_levels.levels\" must be an array");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::string at = "fit.decode_levels.levels[" + std::to_string(i) + "]";
    const auto field = [&](const char* name) {
      const auto& level = levels[i];
      if (!level.is_object() || !level.contains(name) || !level[name].is_number() || !std::isfinite(level[name].get<double>()))
        throw CostError(file.string() + ": field \"" + at + "." + name + "\" must be a finite number");
      return level[name].get<double>();
    };
    const DecodeLevel l{field("batch"), field("step_s"), field("s_per_context_token")};
    if (!(l.batch > 0) || (!t.levels.empty() && !(l.batch > t.levels.back().batch)))
      throw CostError(file.string() + ": field \"" + at + ".batch\" must be > 0 and above the level before it");
    t.levels.push_back(l);
  }
  return t;
}

}  // namespace

nlohmann::json engine_fit_json(const EngineFit& f) {
  return {{"ttft_base_s", f.ttft_base_s},
          {"prefill_s_per_token", f.prefill_s_per_token},
          // The rate, for reading; 0 when the TTFT is all quadratic (no linear term).
          {"prefill_tokens_per_s", f.prefill_s_per_token > 0 ? 1 / f.prefill_s_per_token : 0.0},
          {"ttft_s_per_token_squared", f.ttft_s_per_token_squared},
          {"step_overhead_s", f.step_overhead_s},
          {"sequence_overhead_s", f.sequence_overhead_s},
          {"context_s_per_token", f.context_s_per_token},
          {"queue_share", f.queue_share},
          {"decode_levels", decode_levels_json(f.decode_levels)},
          {"queue_points", f.queue_points},
          {"prefill_r_squared", f.prefill_r_squared},
          {"decode_r_squared", f.decode_r_squared},
          {"prefill_resid_sd_s", f.prefill_resid_sd_s},
          {"decode_resid_sd_s", f.decode_resid_sd_s},
          {"prefill_points", f.prefill_points},
          {"decode_points", f.decode_points},
          {"prefill_residuals_s", f.prefill_residuals_s},
          {"decode_residuals_s", f.decode_residuals_s}};
}

EngineProfile load_engine_profile(const std::filesystem::path& file) {
  const nlohmann::json j = read_json_file(file);
  EngineProfile p;
  if (j.contains("engine") && j["engine"].is_string()) p.engine_url = j["engine"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) p.model = j["model"].get<std::string>();
  p.max_concurrency = number_at(j, "max_concurrency", file);
  if (j.contains("prefill_chunk_tokens")) p.prefill_chunk_tokens = number_at(j, "prefill_chunk_tokens", file);
  p.fit.ttft_base_s = number_at(j, "fit.ttft_base_s", file);
  // Profiles written before the quadratic term give the rate only.
  if (j.contains("fit") && j["fit"].is_object() && j["fit"].contains("prefill_s_per_token")) {
    p.fit.prefill_s_per_token = number_at(j, "fit.prefill_s_per_token", file);
  } else {
    const double rate = number_at(j, "fit.prefill_tokens_per_s", file);
    if (!(rate > 0)) throw CostError(file.string() + ": fit.prefill_tokens_per_s must be > 0");
    p.fit.prefill_s_per_token = 1 / rate;
  }
  // Profiles written before the quadratic term have none.
  if (j.contains("fit") && j["fit"].is_object() && j["fit"].contains("ttft_s_per_token_squared"))
    p.fit.ttft_s_per_token_squared = number_at(j, "fit.ttft_s_per_token_squared", file);
  // Profiles written before the queue share have none (requests in step are then not modelled).
  if (j.contains("fit") && j["fit"].is_object() && j["fit"].contains("queue_share")) {
    p.fit.queue_share = number_at(j, "fit.queue_share", file);
    if (!(p.fit.queue_share >= 0 && p.fit.queue_share <= 1)) throw CostError(file.string() + ": fit.queue_share must be in [0, 1]");
  }
  // Profiles written before the measured levels have none (the step is then a + b batch + c batch context).
  if (j.contains("fit") && j["fit"].is_object() && j["fit"].contains("decode_levels"))
    p.fit.decode_levels = load_decode_levels(j, file);
  p.fit.step_overhead_s = number_at(j, "fit.step_overhead_s", file);
  p.fit.sequence_overhead_s = number_at(j, "fit.sequence_overhead_s", file);
  p.fit.context_s_per_token = number_at(j, "fit.context_s_per_token", file);
  if (!(p.fit.prefill_s_per_token >= 0) || !(p.fit.ttft_s_per_token_squared >= 0) ||
      !(p.fit.prefill_s_per_token > 0 || p.fit.ttft_s_per_token_squared > 0))
    throw CostError(file.string() + ": fit.prefill_s_per_token and fit.ttft_s_per_token_squared must be >= 0, one > 0");
  // A step that shrinks with more sequences or context, or a level of no time, prices an engine
  // faster than any (a negative TPOT priced 1.8M tokens/s on one GPU): calibrate never writes one.
  if (!(p.fit.sequence_overhead_s >= 0) || !(p.fit.context_s_per_token >= 0))
    throw CostError(file.string() + ": fit.sequence_overhead_s and fit.context_s_per_token must be >= 0");
  for (std::size_t i = 0; i < p.fit.decode_levels.levels.size(); ++i) {
    const auto& l = p.fit.decode_levels.levels[i];
    if (!(l.step_s > 0) || !(l.s_per_context_token >= 0))
      throw CostError(file.string() + ": fit.decode_levels.levels[" + std::to_string(i) +
                      "]: step_s must be > 0 and s_per_context_token >= 0");
  }
  if (!(p.max_concurrency >= 1)) throw CostError(file.string() + ": max_concurrency must be >= 1");
  if (!(p.prefill_chunk_tokens >= 1)) throw CostError(file.string() + ": prefill_chunk_tokens must be >= 1");
  return p;
}

}  // namespace overhead::cost
