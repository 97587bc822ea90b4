// `overhead bench template`: single-threaded render speed of a chat template over the conversations
// of a JSONL file: microseconds per render (median of passes) and MB/s of rendered text.
//
// Two figures: a render from the conversation converted once to engine values (what a pipeline does:
// each record is parsed and converted once, then rendered into a reused buffer), and a render
// straight from the parsed JSON (ChatTemplate::render(json), which converts on every call).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "cli/chat_input.hpp"
#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "cli/option_checks.hpp"
#include "chat/json_value.hpp"
#include "chat/value.hpp"

namespace overhead::cli {

namespace {
struct BenchArgs : TemplateInputs {
  BenchArgs() { date = "2024-07-26"; }
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
  }, a.max_line_bytes);
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
  // Converted once, as the pipeline converts each record once.
  std::vector<chat::Value> messages, extras;
  for (const auto* c : ok) {
    messages.push_back(chat::value_from_json(*c->messages));
    extras.push_back(c->extra.empty() ? chat::Value() : chat::value_from_json(c->extra));
  }
  const auto median_pass = [&](auto&& one_pass, double& best) {
    std::vector<double> secs;
    for (int p = 0; p < std::max(1, a.passes); ++p) {
      const auto t0 = std::chrono::steady_clock::now();
      one_pass();
      secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(secs.begin(), secs.end());
    best = secs.front();
    return secs[secs.size() / 2];
  };
  std::size_t sink = 0;
  std::string out;
  double best = 0, best_json = 0;
  const double med = median_pass(
      [&] {
        for (std::size_t i = 0; i < ok.size(); ++i) {
          tmpl->render_into(out, messages[i], options, extras[i].kind == chat::Kind::Dict ? &extras[i] : nullptr);
          sink += out.size();
        }
      },
      best);
  const double med_json = median_pass(
      [&] {
        for (const auto* c : ok) sink += tmpl->render(*c->messages, options, c->extra).size();
      },
      best_json);
  const double n = static_cast<double>(ok.size());
  const double us = med * 1e6 / n;
  const double mbs = static_cast<double>(bytes) / med / 1e6;
  if (a.json) {
    std::printf("{\"renders\":%zu,\"skipped\":%zu,\"bytes\":%zu,\"passes\":%d,\"us_per_render\":%.4f,"
                "\"best_us_per_render\":%.4f,\"mb_per_s\":%.2f,\"us_per_render_from_json\":%.4f,"
                "\"best_us_per_render_from_json\":%.4f}\n",
                ok.size(), skipped, bytes, std::max(1, a.passes), us, best * 1e6 / n, mbs, med_json * 1e6 / n,
                best_json * 1e6 / n);
  } else {
    std::printf("template %s: %zu renders (%zu skipped), %zu bytes per pass, %d passes\n", tmpl->name().c_str(),
                ok.size(), skipped, bytes, std::max(1, a.passes));
    std::printf("  converted once:  median %.3f us/render  %.1f MB/s  | best %.3f us/render\n", us, mbs,
                best * 1e6 / n);
    std::printf("  from JSON:       median %.3f us/render  %.1f MB/s  | best %.3f us/render\n", med_json * 1e6 / n,
                static_cast<double>(bytes) / med_json / 1e6, best_json * 1e6 / n);
  }
  return sink == 0 ? 1 : 0;
}
}  // namespace

void add_bench_template_command(CLI::App& bench, int& exit_code) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = bench.add_subcommand("template", "Chat template render speed (single thread)");
  add_template_input_options(*cmd, *args,
                             {.input = "JSONL file (.gz ok)", .field = "Field holding the messages",
                              .date = "Date for strftime_now (YYYY-MM-DD)"});
  cmd->add_option("--passes", args->passes, "Timed passes over the input (median reported)")->check(integer_in(1, 1000));
  cmd->add_flag("--json", args->json, "Print one JSON line");
  cmd->callback([args, &exit_code]() {
    require_template_source(*args);
    exit_code = run_bench(*args);
  });
}

}  // namespace overhead::cli
