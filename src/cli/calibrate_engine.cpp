#include "cli/calibrate_engine.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "aws/http_client.hpp"
#include "backends/openai_decoder.hpp"
#include "binding/chat_binding.hpp"
#include "ports/backend_url.hpp"
#include "ports/clock.hpp"

namespace overhead::cli {

namespace {

// The prompt of exactly `tokens` tokens as the tokenizer counts it (special tokens included, as
// the engine adds its BOS): a run of one common word, grown until the count is reached.
std::string prompt_of(const tok::Tokenizer& t, int tokens) {
  std::string text = "hello";
  std::size_t n = t.count(text);
  while (static_cast<int>(n) < tokens) {
    text += " hello";
    n = t.count(text);
  }
  return text;
}

struct Outcome {
  ports::DecodeResult result;
  std::string error;
  bool done = false;
};

struct Wave {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<Outcome> outcomes;
  std::size_t pending = 0;
};

class WaveCallbacks final : public ports::DecodeCallbacks {
 public:
  WaveCallbacks(std::shared_ptr<Wave> wave, std::size_t index) : wave_(std::move(wave)), index_(index) {}
  void on_done(ports::DecodeResult result) override { finish(std::move(result), ""); }
  void on_error(const ports::DecoderError& error) override { finish({}, error.what()); }

 private:
  void finish(ports::DecodeResult result, std::string error) {
    std::lock_guard lock(wave_->mutex);
    auto& o = wave_->outcomes[index_];
    o.result = std::move(result);
    o.error = std::move(error);
    o.done = true;
    --wave_->pending;
    wave_->cv.notify_all();
  }
  std::shared_ptr<Wave> wave_;
  std::size_t index_;
};

// Throws when the engine's usage cannot be the answer it streamed: more completion tokens than
// max_tokens allowed, or far from the tokens of the streamed text (counted with our tokenizer: at
// most twice them plus 4, at least half less 4; a tokenizer that is not quite the engine's, or a
// token of no text, stays well inside). The time per token is the stream's time over the usage, so
// an engine that claimed 1,000,000 tokens for 5 streamed gave a negative step slope and a profile
// that priced 1.8M tokens/s.
void check_usage(const ports::DecodeResult& res, int max_tokens, const tok::Tokenizer& tokenizer) {
  const std::int64_t claimed = res.output_tokens;
  if (claimed > max_tokens)
    throw std::runtime_error("the engine's usage says " + std::to_string(claimed) + " completion_tokens for a request of max_tokens " +
                             std::to_string(max_tokens) + ": its token counts cannot be used to time a token");
  const auto streamed = static_cast<std::int64_t>(tokenizer.count(res.text, false));
  if (claimed > 2 * streamed + 4 || streamed > 2 * claimed + 4)
    throw std::runtime_error("the engine's usage says " + std::to_string(claimed) + " completion_tokens, but the text it streamed is " +
                             std::to_string(streamed) + " tokens: its token counts cannot be used to time a token");
}

// `concurrency` copies of one prompt started together; waits for all of them. Throws on the first
// failed request with the engine's message, or an answer whose usage does not match it (check_usage).
std::vector<Outcome> run_wave(const backends::OpenAiDecoder& decoder, const std::string& model, const std::string& prompt,
                              int prompt_tokens, int max_tokens, int concurrency, const tok::Tokenizer& tokenizer) {
  auto wave = std::make_shared<Wave>();
  wave->outcomes.resize(static_cast<std::size_t>(concurrency));
  wave->pending = wave->outcomes.size();
  std::vector<std::shared_ptr<ports::DecodeTicket>> tickets;
  for (int i = 0; i < concurrency; ++i) {
    ports::DecodeRequest r;
    r.prompt = prompt;
    r.prompt_tokens = prompt_tokens;
    r.max_tokens = max_tokens;
    r.tokenizer = model;
    tickets.push_back(decoder.start(r, std::make_shared<WaveCallbacks>(wave, static_cast<std::size_t>(i))));
  }
  std::unique_lock lock(wave->mutex);
  wave->cv.wait(lock, [&] { return wave->pending == 0; });
  for (const auto& o : wave->outcomes) {
    if (o.error.empty()) continue;
    // An answer that is not a server-sent event stream at all: the engine ignored "stream": true.
    const bool no_stream = o.error.find("not an OpenAI stream (a line is no server-sent event)") != std::string::npos;
    throw std::runtime_error(std::string(no_stream ? "the engine does not stream (calibrate times each token of a "
                                                     "streamed answer); " : "") +
                             "the engine failed a request of " + std::to_string(prompt_tokens) + " prompt tokens: " + o.error);
  }
  for (const auto& o : wave->outcomes) check_usage(o.result, max_tokens, tokenizer);
  return wave->outcomes;
}

// Concurrency levels 1, 2, 4, ... up to max; the extremes first, so a short budget still spans them.
std::vector<int> concurrency_order(int max_concurrency) {
  std::vector<int> levels;
  for (int c = 1; c < max_concurrency; c *= 2) levels.push_back(c);
  levels.push_back(max_concurrency);
  std::vector<int> order = {levels.front()};
  if (levels.size() > 1) order.push_back(levels.back());
  for (std::size_t i = 1; i + 1 < levels.size(); ++i) order.push_back(levels[i]);
  return order;
}

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

constexpr int kMaxRounds = 1000;  // the budget ends them first; a bound on the samples kept

}  // namespace

nlohmann::json fetch_models(const std::string& base_url, const std::string& model) {
  // /v1/models is a short list: a body past 4 MiB is refused rather than parsed.
  constexpr std::size_t kMaxBody = 4u << 20;
  const std::string shown = ports::redact_url(base_url);  // the URL may hold the engine's password
  aws::HttpRequest request;
  request.url = base_url + "/models";
  request.timeout = std::chrono::milliseconds(10000);
  aws::HttpResponse response;
  try {
    // One call, connecting included, within the 10 s it always had.
    aws::HttpClient client({.connect_timeout = request.timeout});
    response = client.send(request);
  } catch (const aws::TransportError& e) {
    // Its message names the URL; the engine's is shown redacted, with curl's reason.
    const std::string what = e.what(), prefix = request.method + " " + request.url + ": ";
    throw std::runtime_error("the engine at " + shown + " is unreachable: " +
                             (what.starts_with(prefix) ? what.substr(prefix.size()) : what));
  }
  const long status = response.status;
  const std::string& body = response.body;
  const std::string not_openai = "the engine at " + shown + " is not OpenAI-compatible: GET /models ";
  if (status != 200) throw std::runtime_error(not_openai + "answered HTTP " + std::to_string(status));
  if (body.size() > kMaxBody) throw std::runtime_error(not_openai + "answered more than 4 MiB");
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_array() || j["data"].empty())
    throw std::runtime_error(not_openai + "is not a model list ({\"data\": [{\"id\": ...}]})");
  std::vector<std::string> ids;
  for (const auto& m : j["data"])
    if (m.is_object() && m.contains("id") && m["id"].is_string()) ids.push_back(m["id"].get<std::string>());
  if (ids.empty()) throw std::runtime_error(not_openai + "lists no model id");
  if (!model.empty() && std::find(ids.begin(), ids.end(), model) == ids.end()) {
    std::string served;
    for (const auto& id : ids) served += (served.empty() ? "" : ", ") + id;
    throw std::runtime_error("the engine at " + shown + " does not serve model '" + model + "' (it serves: " + served + ")");
  }
  return j;
}

namespace {

// The integer meta.`key` of `model`'s /v1/models entry, in [0, 2^20]; 0 when it is not there.
int model_meta_int(const nlohmann::json& models, const std::string& model, const char* key) {
  for (const auto& m : models["data"]) {
    if (!m.is_object() || m.value("id", nlohmann::json()) != model) continue;
    const auto meta = m.find("meta");
    if (meta == m.end() || !meta->is_object()) return 0;
    const auto value = meta->find(key);
    if (value == meta->end() || !value->is_number_integer()) return 0;
    return std::max(0, static_cast<int>(std::min<std::int64_t>(value->get<std::int64_t>(), 1 << 20)));
  }
  return 0;
}

}  // namespace

int slots_of(const nlohmann::json& models, const std::string& model) { return model_meta_int(models, model, "sequences"); }

int batch_tokens_of(const nlohmann::json& models, const std::string& model) { return model_meta_int(models, model, "n_batch"); }

namespace {

// What the measuring rounds share: the engine, the clock and the budget left.
struct Rounds {
  const CalibrationPlan& plan;
  const backends::OpenAiDecoder& decoder;
  const tok::Tokenizer& tokenizer;
  const std::function<double()>& elapsed;
  const std::function<void(const std::string&)>& say;
  double slowest_prompt = 0;  // the longest lone request so far: the next one must fit the budget
  double last_wave = 0;       // the last wave's time, likewise
  bool over_budget(double next) const { return elapsed() + next > plan.budget_s; }
};

// Prefill: one request at a time at each prompt length (its TTFT), and its tokens after the first
// a lone decode at that context. False when the budget ended the round.
bool prefill_round(Rounds& r, Calibration& c) {
  for (const int length : r.plan.prefill_lengths) {
    if (r.over_budget(r.slowest_prompt)) return false;
    const auto t0 = r.elapsed();
    const auto prompt = prompt_of(r.tokenizer, length);
    const auto outcomes = run_wave(r.decoder, c.model, prompt, length, r.plan.prefill_output_tokens, 1, r.tokenizer);
    r.slowest_prompt = std::max(r.slowest_prompt, r.elapsed() - t0);
    const auto& res = outcomes.front().result;
    if (res.first_token == 0) continue;  // an empty answer has no first token to time
    const double ttft = seconds(res.first_token - res.decode_start);
    c.prefill.push_back({static_cast<double>(length), ttft});
    double tpot = 0;
    if (res.output_tokens >= 3) {
      tpot = seconds(res.decode_end - res.first_token) / static_cast<double>(res.output_tokens - 1);
      c.lone_decode.push_back({1, length + static_cast<double>(res.output_tokens) / 2, tpot, 1});
    }
    c.raw.push_back({{"phase", "prefill"}, {"concurrency", 1}, {"prompt_tokens", length},
                     {"output_tokens", res.output_tokens}, {"ttft_s", ttft}, {"tpot_s", tpot},
                     {"e2e_s", seconds(res.decode_end - res.decode_start)}});
    r.say("prefill " + std::to_string(length) + " tokens: TTFT " + std::to_string(ttft * 1000) + " ms");
  }
  return true;
}

// Decode: waves of `level` equal requests, each prompt length at each level. False when the budget
// ended the round.
bool decode_round(Rounds& r, Calibration& c) {
  for (const int level : concurrency_order(c.max_concurrency)) {
    for (const int length : r.plan.decode_lengths) {
      if (r.over_budget(r.last_wave)) return false;
      const auto t0 = r.elapsed();
      const auto prompt = prompt_of(r.tokenizer, length);
      const auto outcomes = run_wave(r.decoder, c.model, prompt, length, r.plan.decode_tokens, level, r.tokenizer);
      r.last_wave = r.elapsed() - t0;
      // The sequences in flight while a request decoded: the wave's requests from their sending
      // to their end, averaged over its first token to last. Not `level` throughout: the engine
      // takes the wave's prompts one step after another, so the first answers end before the
      // last have begun decoding, and those last decode with fewer beside them.
      const auto in_flight = [&](const auto& own) {
        const double span = static_cast<double>(own.decode_end - own.first_token);
        if (!(span > 0)) return static_cast<double>(level);
        double overlap = 0;
        for (const auto& other : outcomes) {
          const auto from = std::max(own.first_token, other.result.decode_start);
          const auto to = std::min(own.decode_end, other.result.decode_end);
          if (to > from) overlap += static_cast<double>(to - from);
        }
        return overlap / span;
      };
      double sum_tpot = 0;
      int counted = 0;
      for (const auto& o : outcomes) {
        const auto& res = o.result;
        const double ttft = res.first_token ? seconds(res.first_token - res.decode_start) : 0;
        if (res.first_token && level >= 2) c.concurrent.push_back({static_cast<double>(level), static_cast<double>(length), ttft});
        double tpot = 0;
        if (res.first_token && res.output_tokens >= 3) {
          tpot = seconds(res.decode_end - res.first_token) / static_cast<double>(res.output_tokens - 1);
          c.decode.push_back({in_flight(res), length + static_cast<double>(res.output_tokens) / 2, tpot, static_cast<double>(level)});
          sum_tpot += tpot;
          ++counted;
        }
        c.raw.push_back({{"phase", "decode"}, {"concurrency", level}, {"prompt_tokens", length},
                         {"output_tokens", res.output_tokens}, {"ttft_s", ttft}, {"tpot_s", tpot},
                         {"e2e_s", seconds(res.decode_end - res.decode_start)}});
      }
      r.say("decode x" + std::to_string(level) + ", " + std::to_string(length) + " prompt tokens: TPOT " +
            (counted ? std::to_string(sum_tpot / counted * 1000) + " ms" : std::string("n/a (answers under 3 tokens)")));
    }
  }
  return true;
}

// The measured rounds on an engine that has been warmed up: `elapsed` counts from their start and
// `plan.budget_s` is what is left of the budget. Each round is a prefill sweep then a decode
// sweep, round after round until the budget: every point, the lone prompts' as much as the
// waves', sees the shared machine's slow and fast minutes alike (the prefill sweeps all ran in
// the first third before), and the longer the budget, the steadier each point's mean.
Calibration measure_warm_engine(const CalibrationPlan& plan, const backends::OpenAiDecoder& decoder, const tok::Tokenizer& tokenizer,
                                Calibration c, const std::function<double()>& elapsed,
                                const std::function<void(const std::string&)>& say, double warm_up_offset_s) {
  Rounds rounds{plan, decoder, tokenizer, elapsed, say};
  for (int round = 0; round < kMaxRounds; ++round)
    if (!prefill_round(rounds, c) || !decode_round(rounds, c)) break;
  c.elapsed_s = warm_up_offset_s + elapsed();
  return c;
}

}  // namespace

Calibration measure_engine(const CalibrationPlan& plan, const std::function<void(const std::string&)>& progress) {
  Calibration c;
  c.models = fetch_models(plan.base_url, plan.model);
  c.model = plan.model.empty() ? c.models["data"][0]["id"].get<std::string>() : plan.model;
  c.slots = slots_of(c.models, c.model);
  c.batch_tokens = batch_tokens_of(c.models, c.model);
  c.max_concurrency = c.slots >= 2 ? std::min(plan.max_concurrency, c.slots) : plan.max_concurrency;
  const auto tokenizer = binding::load_tokenizer(plan.tokenizer);
  backends::OpenAiDecoderParams params;
  params.base_url = plan.base_url;
  params.model = c.model;
  params.usage_required = true;  // time per output token needs the engine's own count
  params.timeout = std::chrono::milliseconds(static_cast<long long>(std::max(10.0, plan.budget_s) * 1000));
  const backends::OpenAiDecoder decoder(params);
  auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };

  // Warm-up, not measured: a tenth of the budget of the waves and lone prompts to come. A freshly
  // started engine answers its first requests slowly (code not yet compiled or tuned, buffers not
  // yet grown: the tests' engine took 7-9 ms to a first token cold and 3 ms warm), and the fit
  // must describe the engine as it serves. The budget to measure is what is left.
  const double warm_up_s = plan.budget_s / 10;
  for (int round = 0; elapsed() < warm_up_s; ++round) {
    const int length = plan.prefill_lengths[static_cast<std::size_t>(round) % plan.prefill_lengths.size()];
    const auto prompt = prompt_of(*tokenizer, length);
    const auto outcomes = round % 2 == 0 ? run_wave(decoder, c.model, prompt, length, plan.decode_tokens, c.max_concurrency, *tokenizer)
                                         : run_wave(decoder, c.model, prompt, length, 1, 1, *tokenizer);
    c.raw.push_back({{"phase", "warm-up"}, {"concurrency", outcomes.size()}, {"prompt_tokens", length},
                     {"output_tokens", outcomes.front().result.output_tokens}});
  }
  say("warm-up done in " + std::to_string(elapsed()) + " s");
  const double warm_up_spent = elapsed();
  start = std::chrono::steady_clock::now();
  CalibrationPlan measured_plan = plan;
  measured_plan.budget_s = std::max(0.0, plan.budget_s - warm_up_spent);
  return measure_warm_engine(measured_plan, decoder, *tokenizer, std::move(c), elapsed, say, warm_up_spent);
}

}  // namespace overhead::cli
