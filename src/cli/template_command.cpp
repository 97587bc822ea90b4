// `overhead template`: renders the chat template of a tokenizer for each conversation of a JSONL
// file, one {"text": ...} (or {"error": ...}) line per input line.
#include <cstdio>
#include <iostream>

#include "cli/chat_input.hpp"
#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "util/json_writer.hpp"

namespace overhead::cli {

namespace {
int run_template(const TemplateInputs& a) {
  const auto tmpl = load_chat_template(a.tokenizer, a.template_file);
  chat::RenderOptions options;
  options.add_generation_prompt = a.add_generation_prompt;
  if (!a.date.empty()) options.date = a.date;
  bool failed = false;
  std::string out;
  Conversation conv;
  for_each_line(a.input, [&](std::size_t n, std::string_view line) {
    out.clear();
    std::string error;
    if (parse_conversation(line, n, a.field, conv, error)) {
      try {
        const std::string text = tmpl->render(*conv.messages, options, conv.extra);
        out += "{\"text\":";
        util::append_json_string(out, text);
        out += "}\n";
      } catch (const chat::TemplateError& e) {
        error = "line " + std::to_string(n) + ": " + e.what();
      }
    }
    if (!error.empty()) {
      failed = true;
      out += "{\"error\":";
      util::append_json_string(out, error);
      out += "}\n";
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
  }, a.max_line_bytes);
  return failed ? 1 : 0;
}
}  // namespace

void add_template_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TemplateInputs>();
  CLI::App* cmd = app.add_subcommand("template", "Render the chat template for each conversation of a JSONL file");
  add_template_input_options(*cmd, *args,
                             {.input = "JSONL file (.gz ok, - for stdin)",
                              .field = "Field holding the messages (or an object with messages, tools)",
                              .date = "Pin strftime_now to this date (YYYY-MM-DD)"});
  cmd->callback([args, &exit_code]() {
    require_template_source(*args);
    exit_code = run_template(*args);
  });
}

}  // namespace overhead::cli
