// `overhead bench template`: single-threaded render speed of a chat template over the conversations
// of a JSONL file: microseconds per render (median of passes) and MB/s of rendered text.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "cli/chat_input.hpp"
#include "cli/cli_io.hpp"
#include "cli/commands.hpp"

namespace overhead::cli {

namespace {
struct BenchArgs {
  std::string tokenizer;
  std::string template_file;
  std::string input;
  std::string field = "messages";
  bool add_generation_prompt = false;
  std::string date = "2024-07-26";
  int passes = 10;
  bool json = false;
};

int run_bench(const BenchArgs& a) {
  const auto tmpl = load_chat_template(a.tokenizer, a.template_file);
  chat::RenderOptions options;
  options.add_generation_prompt = a.add_generation_prompt;
  options.date = a.date;
  std::vector<Conversation> convs;
  std::size_t skipped = 0;
  for_each_line(a.input, [&](std::size_t n, std::string_view line) {
    Conversation c;
    std::string error;
    if (!parse_conversation(line, n, a.field, c, error)) {
      ++skipped;
      return;
    }
    convs.push_back(std::move(c));
  });
  // Keep the conversations the template accepts; the others are not rendering work.
  std::vector<const Conversation*> ok;
  std::size_t bytes = 0;
  for (const auto& c : convs) {
    try {
      bytes += tmpl->render(*c.messages, options, c.extra).size();
      ok.push_back(&c);
    } catch (const chat::TemplateError&) {
      ++skipped;
    }
  }
  if (ok.empty()) {
    std::fprintf(stderr, "overhead: no conversation of %s renders with this template\n", a.input.c_str());
    return 1;
  }
  std::vector<double> secs;
  std::size_t sink = 0;
  for (int p = 0; p < std::max(1, a.passes); ++p) {
    const auto t0 = std::chrono::steady_clock::now();
    for (const auto* c : ok) sink += tmpl->render(*c->messages, options, c->extra).size();
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  const double med = secs[secs.size() / 2];
  const double us = med * 1e6 / static_cast<double>(ok.size());
  const double mbs = static_cast<double>(bytes) / med / 1e6;
  if (a.json) {
    std::printf("{\"renders\":%zu,\"skipped\":%zu,\"bytes\":%zu,\"passes\":%zu,\"us_per_render\":%.4f,"
                "\"best_us_per_render\":%.4f,\"mb_per_s\":%.2f}\n",
                ok.size(), skipped, bytes, secs.size(), us, secs.front() * 1e6 / static_cast<double>(ok.size()), mbs);
  } else {
    std::printf("template %s: %zu renders (%zu skipped), %zu bytes per pass, %zu passes\n", tmpl->name().c_str(),
                ok.size(), skipped, bytes, secs.size());
    std::printf("  median %.3f us/render  %.1f MB/s  | best %.3f us/render\n", us, mbs,
                secs.front() * 1e6 / static_cast<double>(ok.size()));
  }
  return sink == 0 ? 1 : 0;
}
}  // namespace

void add_bench_template_command(CLI::App& bench, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = bench.add_subcommand("template", "Chat template render speed (single thread)");
  cmd->add_option("--tokenizer", args->tokenizer, "Tokenizer short name or folder with tokenizer_config.json");
  cmd->add_option("--template", args->template_file, "A Jinja template file to use instead of the tokenizer's");
  cmd->add_option("--input", args->input, "JSONL file (.gz ok)")->required();
  cmd->add_option("--field", args->field, "Field holding the messages");
  cmd->add_flag("--add-generation-prompt", args->add_generation_prompt, "Append the assistant prompt");
  cmd->add_option("--date", args->date, "Date for strftime_now (YYYY-MM-DD)")->check(date_validator());
  cmd->add_option("--passes", args->passes, "Timed passes over the input (median reported)");
  cmd->add_flag("--json", args->json, "Print one JSON line");
  cmd->callback([args, &exit_code]() {
    if (args->tokenizer.empty() && args->template_file.empty())
      throw CLI::ValidationError("template", "--tokenizer or --template is required");
    exit_code = run_bench(*args);
  });
}

}  // namespace overhead::cli
