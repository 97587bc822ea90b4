// `overhead tokenize`: one {"ids":[...]} line per input line, in order; a bad line gives
// {"error":"line N: reason"} in its place and the exit code becomes 1.
//
// With --chat each line holds a conversation that is first rendered with the tokenizer's chat
// template, then encoded, as the seed's worker did:
//   tokenizer(apply_chat_template(messages, tokenize=False), add_special_tokens=True)
// Templates that write BOS themselves (Llama-3.3, Gemma-2) therefore give two BOS ids, exactly as
// the seed counted them. --no-special encodes without adding special tokens, which is what
// apply_chat_template(messages, tokenize=True) does.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <span>
#include <string>

#include "cli/chat_input.hpp"
#include "cli/cli_io.hpp"
#include "cli/json_line.hpp"
#include "cli/commands.hpp"
#include "binding/chat_binding.hpp"
#include "util/json_writer.hpp"

namespace overhead::cli {

namespace {

struct TokenizeOptions {
  std::size_t max_line_bytes = util::kDefaultMaxLineBytes;
  std::string tokenizer;
  std::string input;
  std::string field;  // empty: "text", or "messages" with --chat
  bool no_special = false;
  bool chat = false;
  bool add_generation_prompt = false;
  std::string date;
};

// Ids per piece of output: a long line's ids as text are several times the ids themselves, so
// they are written out a piece at a time (through `out`, which then holds one piece at most).
constexpr std::size_t kIdsPerWrite = std::size_t{1} << 16;

void write_ids(std::string& out, const tok::Ids& ids) {
  out += "{\"ids\":";
  if (ids.size() <= kIdsPerWrite) {
    util::append_json_ids(out, ids);
  } else {
    const std::span<const tok::TokenId> all(ids);
    for (std::size_t i = 0; i < ids.size(); i += kIdsPerWrite) {
      const std::size_t start = out.size();
      util::append_json_ids(out, all.subspan(i, std::min(kIdsPerWrite, ids.size() - i)));
      // Each piece comes out as "[a,...,b]": joined, the brackets between pieces become commas.
      if (i > 0) out[start] = ',';
      if (i + kIdsPerWrite >= ids.size()) break;  // the last piece ends the array; the caller writes it
      out.pop_back();
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  out += "}\n";
}

void write_error(std::string& out, const std::string& error) {
  out += "{\"error\":";
  util::append_json_string(out, error);
  out += "}\n";
}

// Writes one output line per input line: {"ids":[...]} when `ids_of(n, line, ids, error)` fills
// `ids` and returns true, else {"error": error}. Returns 1 when any line failed.
template <class IdsOf>
int write_lines(const TokenizeOptions& o, IdsOf&& ids_of) {
  std::string error, line_out;
  tok::Ids ids;
  bool failed = false;
  for_each_line(o.input, [&](std::size_t n, std::string_view line) {
    line_out.clear();
    error.clear();
    ids.clear();
    if (ids_of(n, line, ids, error)) {
      write_ids(line_out, ids);
    } else {
      failed = true;
      write_error(line_out, error);
    }
    std::fwrite(line_out.data(), 1, line_out.size(), stdout);
  }, o.max_line_bytes);
  std::fflush(stdout);
  return failed ? 1 : 0;
}

int run_tokenize(const TokenizeOptions& o) {
  const auto tokenizer = binding::load_tokenizer(o.tokenizer);
  const std::string field = o.field.empty() ? "text" : o.field;
  JsonLineReader reader;
  std::string text;
  return write_lines(o, [&](std::size_t n, std::string_view line, tok::Ids& ids, std::string& error) {
    if (!reader.string_field(line, n, field, text, error)) return false;
    tokenizer->encode_into(text, ids, !o.no_special);
    return true;
  });
}

int run_tokenize_chat(const TokenizeOptions& o) {
  const auto binding = binding::ChatBinding::load(o.tokenizer);
  const tok::Tokenizer* tokenizer = &binding->tokenizer();
  const chat::ChatTemplate* tmpl = &binding->chat_template();
  const std::string field = o.field.empty() ? "messages" : o.field;
  chat::RenderOptions options;
  options.add_generation_prompt = o.add_generation_prompt;
  if (!o.date.empty()) options.date = o.date;
  std::string text;
  Conversation conv;
  return write_lines(o, [&](std::size_t n, std::string_view line, tok::Ids& ids, std::string& error) {
    if (!parse_conversation(line, n, field, conv, error)) return false;
    try {
      text = tmpl->render(*conv.messages, options, conv.extra);
    } catch (const chat::TemplateError& e) {
      error = "line " + std::to_string(n) + ": " + e.what();
      return false;
    }
    tokenizer->encode_into(text, ids, !o.no_special);
    return true;
  });
}

}  // namespace

void add_tokenize_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "Encode the text field of each JSONL line to token ids; with --chat, render the conversation with the "
      "tokenizer's chat template first");
  cmd->footer(
      "With --chat the ids are those of tokenizer(apply_chat_template(messages, tokenize=False),\n"
      "add_special_tokens=True), as the seed encoded them: templates that write BOS themselves\n"
      "(Llama-3.3, Gemma-2) give two BOS ids. --no-special gives apply_chat_template(tokenize=True).");
  cmd->add_option("--tokenizer", opts->tokenizer, "Short name, folder with tokenizer.json, or HF model id")->required();
  cmd->add_option("--input", opts->input, "JSONL file (.gz read compressed; - for stdin)")->required();
  add_max_line_bytes_option(*cmd, opts->max_line_bytes);
  cmd->add_option("--field", opts->field,
                  "Field holding the text (default text); with --chat the messages, or an object with messages "
                  "and tools (default messages; the seed's records use prompt)");
  cmd->add_flag("--no-special", opts->no_special, "Do not add special tokens (add_special_tokens=False)");
  cmd->add_flag("--chat", opts->chat, "Render the field with the tokenizer's chat template, then encode");
  cmd->add_flag("--add-generation-prompt", opts->add_generation_prompt,
                "With --chat: append the assistant prompt (add_generation_prompt=True)");
  cmd->add_option("--date", opts->date, "With --chat: pin strftime_now to this date (YYYY-MM-DD)")
      ->check(date_validator());
  cmd->callback([opts, &exit_code] {
    if (!opts->chat && (opts->add_generation_prompt || !opts->date.empty()))
      throw CLI::ValidationError("tokenize", "--add-generation-prompt and --date need --chat");
    exit_code = opts->chat ? run_tokenize_chat(*opts) : run_tokenize(*opts);
  });
}

}  // namespace overhead::cli
