// `overhead tokenize`: one {"ids":[...]} line per input line, in order; a bad line gives
// {"error":"line N: reason"} in its place and the exit code becomes 1.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_io.hpp"
#include "cli/commands.hpp"
#include "tok/tokenizer.hpp"
#include "util/json_writer.hpp"

namespace overhead::cli {

namespace {

struct TokenizeOptions {
  std::string tokenizer;
  std::string input;
  std::string field = "text";
  bool no_special = false;
};

int run_tokenize(const TokenizeOptions& o) {
  const auto tokenizer = tok::Tokenizer::load(o.tokenizer);
  simdjson::ondemand::parser parser;
  std::string text, error, line_out;
  tok::Ids ids;
  bool failed = false;
  for_each_line(o.input, [&](std::size_t n, std::string_view line) {
    line_out.clear();
    if (string_field(parser, line, n, o.field, text, error)) {
      ids.clear();
      tokenizer->encode_into(text, ids, !o.no_special);
      line_out += "{\"ids\":";
      util::append_json_ids(line_out, ids);
      line_out += "}\n";
    } else {
      failed = true;
      line_out += "{\"error\":";
      util::append_json_string(line_out, error);
      line_out += "}\n";
    }
    std::fwrite(line_out.data(), 1, line_out.size(), stdout);
  });
  std::fflush(stdout);
  return failed ? 1 : 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Encode the text field of each JSONL line to token ids");
  cmd->add_option("--tokenizer", opts->tokenizer, "Short name, folder with tokenizer.json, or HF model id")->required();
  cmd->add_option("--input", opts->input, "JSONL file (.gz read compressed; - for stdin)")->required();
  cmd->add_option("--field", opts->field, "Field holding the text")->capture_default_str();
  cmd->add_flag("--no-special", opts->no_special, "Do not add special tokens (add_special_tokens=False)");
  cmd->callback([opts, &exit_code] { exit_code = run_tokenize(*opts); });
}

}  // namespace overhead::cli
