// Shared by `template`, `bench template` and `tokenize --chat`: finding a tokenizer's chat template,
// the flags that name a template and its JSONL input, and reading one conversation from a line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "chat/chat_template.hpp"
#include "util/line_reader.hpp"

namespace overhead::cli {

// The chat template of tokenizer `name_or_path` (a short name or a folder holding
// tokenizer_config.json), or of a raw Jinja file when `template_file` is not empty (then the
// tokenizer, if given, only supplies the special tokens). Throws std::runtime_error naming the file.
std::shared_ptr<const chat::ChatTemplate> load_chat_template(const std::string& name_or_path,
                                                             const std::string& template_file);

// One conversation: `field` of the line holds a list of messages, or an object with "messages" and
// further variables (tools, documents, ...). Key order is kept (ordered_json), as Python keeps it.
struct Conversation {
  nlohmann::ordered_json line;      // owns everything below
  const nlohmann::ordered_json* messages = nullptr;
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
};
// Returns false and sets `error` ("line N: reason") when the line is not usable.
bool parse_conversation(std::string_view text, std::size_t line_number, const std::string& field, Conversation& out,
                        std::string& error);

// What `template` and `bench template` render: a template (--tokenizer or --template) over the
// conversations of a JSONL file.
struct TemplateInputs {
  std::size_t max_line_bytes = util::kDefaultMaxLineBytes;
  std::string tokenizer;
  std::string template_file;
  std::string input;
  std::string field = "messages";
  bool add_generation_prompt = false;
  std::string date;
};
// The help texts that differ by command.
struct TemplateInputHelp {
  const char* input;
  const char* field;
  const char* date;
};
// Binds --tokenizer, --template, --input, --max-line-bytes, --field, --add-generation-prompt and
// --date to `in`.
void add_template_input_options(CLI::App& cmd, TemplateInputs& in, const TemplateInputHelp& help);
// Throws CLI::ValidationError when neither --tokenizer nor --template names a template.
void require_template_source(const TemplateInputs& in);

// Checks a --date value: "YYYY-MM-DD", a real calendar date. Returns "" when valid, else the reason
// (CLI11 shows it with the option name and exits with the usage code).
std::string date_error(const std::string& date);
// The CLI11 validator built on date_error, for every command that takes --date.
CLI::Validator date_validator();

}  // namespace overhead::cli
