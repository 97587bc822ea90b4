// `overhead bench tokenize`: single-threaded encode speed over a JSONL file: the first pass of the
// process (what a fresh process pays: its per-thread caches empty, the tables' pages not yet
// touched) and the median of the warm passes after it, then the same work spread over 1..N threads
// to show how it scales.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_io.hpp"
#include "cli/json_line.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "binding/chat_binding.hpp"
#include "util/thread_pool.hpp"

namespace overhead::cli {

namespace {

struct BenchOptions {
  std::size_t max_line_bytes = util::kDefaultMaxLineBytes;
  std::string tokenizer;
  std::string input;
  std::string field = "text";
  bool no_special = false;
  int passes = 7;
  unsigned max_threads = 0;
  bool json = false;
};

// CPU time of the calling thread: unlike wall time it does not grow when other processes share
// the cores, so single-thread figures stay comparable on a busy machine.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int run_bench(const BenchOptions& o) {
  const auto load_start = std::chrono::steady_clock::now();
  const auto tokenizer = binding::load_tokenizer(o.tokenizer);
  const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
  std::vector<std::string> texts;
  {
    JsonLineReader reader;
    std::string text, error;
    for_each_line(o.input, [&](std::size_t n, std::string_view line) {
      if (!reader.string_field(line, n, o.field, text, error)) throw std::runtime_error(o.input + ": " + error);
      texts.push_back(text);
    }, o.max_line_bytes);
  }
  if (texts.empty()) throw std::runtime_error(o.input + ": no input lines");
  std::size_t bytes = 0;
  for (const auto& t : texts) bytes += t.size();

  const bool special = !o.no_special;
  // The first pass is also the warm-up: timed apart, it is the fresh process's figure.
  tok::Ids ids;
  std::size_t tokens = 0;
  const double first_c0 = thread_cpu_seconds();
  const auto first_t0 = std::chrono::steady_clock::now();
  for (const auto& t : texts) {
    ids.clear();
    tokenizer->encode_into(t, ids, special);
    tokens += ids.size();
  }
  const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - first_t0).count();
  const double first_cpu_s = thread_cpu_seconds() - first_c0;
  std::vector<double> times, cpu_times;
  for (int p = 0; p < o.passes; ++p) {
    const double c0 = thread_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t n = 0;
    for (const auto& t : texts) {
      ids.clear();
      tokenizer->encode_into(t, ids, special);
      n += ids.size();
    }
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu_times.push_back(thread_cpu_seconds() - c0);
    if (n != tokens) throw std::runtime_error("token count changed between passes");
  }
  const double med = median(times);
  const double cpu_med = median(cpu_times);
  const double mbps = static_cast<double>(bytes) / med / 1e6;
  const double tokps = static_cast<double>(tokens) / med;
  const double us_item = med * 1e6 / static_cast<double>(texts.size());

  // Thread scaling: the same texts over k threads, median of a few passes each.
  const unsigned max_threads = o.max_threads ? o.max_threads : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::pair<unsigned, double>> scaling;
  for (unsigned k = 1; k <= max_threads; k *= 2) {
    util::ThreadPool pool(k);
    std::vector<double> t;
    for (int p = 0; p < std::max(3, o.passes / 2); ++p) {
      const auto t0 = std::chrono::steady_clock::now();
      pool.parallel_for(texts.size(), [&](std::size_t i) { tokenizer->count(texts[i], special); });
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    scaling.emplace_back(k, static_cast<double>(bytes) / median(t) / 1e6);
    if (k * 2 > max_threads && k != max_threads) k = max_threads / 2;  // always end at max_threads
  }

  if (o.json) {
    std::printf("{\"tokenizer\":\"%s\",\"items\":%zu,\"bytes\":%zu,\"tokens\":%zu,\"passes\":%d,\"load_s\":%.4f,"
                "\"median_s\":%.6f,\"cpu_median_s\":%.6f,\"cpu_mb_per_s\":%.3f,\"mb_per_s\":%.3f,\"tokens_per_s\":%.1f,\"us_per_item\":%.3f,"
                "\"first_s\":%.6f,\"first_cpu_s\":%.6f,\"first_mb_per_s\":%.3f,\"first_cpu_mb_per_s\":%.3f,\"threads\":[",
                tokenizer->name().c_str(), texts.size(), bytes, tokens, o.passes, load_s, med, cpu_med, static_cast<double>(bytes) / cpu_med / 1e6, mbps, tokps, us_item,
                first_s, first_cpu_s, static_cast<double>(bytes) / first_s / 1e6, static_cast<double>(bytes) / first_cpu_s / 1e6);
    for (std::size_t i = 0; i < scaling.size(); ++i)
      std::printf("%s{\"threads\":%u,\"mb_per_s\":%.3f}", i ? "," : "", scaling[i].first, scaling[i].second);
    std::printf("]}\n");
    return 0;
  }
  std::printf("tokenizer   %s (loaded in %.3f s)\n", tokenizer->name().c_str(), load_s);
  std::printf("input       %zu items, %zu bytes, %zu tokens, %d passes (median), 1 thread\n", texts.size(), bytes,
              tokens, o.passes);
  std::printf("MB/s        %.2f (wall)  %.2f (thread CPU time)\n", mbps, static_cast<double>(bytes) / cpu_med / 1e6);
  std::printf("first pass  %.2f MB/s (wall)  %.2f (thread CPU time)\n", static_cast<double>(bytes) / first_s / 1e6,
              static_cast<double>(bytes) / first_cpu_s / 1e6);
  std::printf("tokens/s    %.0f\n", tokps);
  std::printf("us/item     %.3f\n", us_item);
  std::printf("threads     ");
  for (const auto& [k, rate] : scaling) std::printf("%u: %.2f MB/s (x%.2f)  ", k, rate, rate / scaling[0].second);
  std::printf("\n");
  return 0;
}

}  // namespace

void add_bench_tokenize_command(CLI::App& bench, int& exit_code) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd = bench.add_subcommand("tokenize", "Encode speed: MB/s, tokens/s, us/item, thread scaling");
  cmd->add_option("--tokenizer", opts->tokenizer, "Short name, folder with tokenizer.json, or HF model id")->required();
  cmd->add_option("--input", opts->input, "JSONL file (.gz read compressed)")->required();
  add_max_line_bytes_option(*cmd, opts->max_line_bytes);
  cmd->add_option("--field", opts->field, "Field holding the text")->capture_default_str();
  cmd->add_option("--passes", opts->passes, "Timed passes (median reported)")->capture_default_str()->check(integer_in(1, 1000));
  cmd->add_option("--threads", opts->max_threads, "Largest thread count for the scaling figure (0 = all cores)")
      ->check(integer_in(0, 1024));
  cmd->add_flag("--no-special", opts->no_special, "Do not add special tokens");
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the table");
  cmd->callback([opts, &exit_code] { exit_code = run_bench(*opts); });
}

}  // namespace overhead::cli
