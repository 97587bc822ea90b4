#include "cli/chat_input.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>
#include <vector>
#include <filesystem>
#include <stdexcept>

#include "binding/chat_binding.hpp"
#include "cli/cli_io.hpp"
#include "cli/json_line.hpp"
#include "util/line_reader.hpp"

namespace overhead::cli {

namespace {

namespace fs = std::filesystem;

// The template engine refuses values nested deeper than 256 levels (chat/json_value.cpp) and
// then names the template file; checked here first so that the error names the input line.
constexpr std::size_t kMaxInputDepth = 256;

// Nesting depth of a JSON value (a scalar is 0), without recursion: the input is untrusted.
std::size_t nesting_depth(const nlohmann::ordered_json& root) {
  std::size_t deepest = 0;
  std::vector<std::pair<const nlohmann::ordered_json*, std::size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    const auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    deepest = std::max(deepest, d + 1);
    for (const auto& child : *v) stack.emplace_back(&child, d + 1);
  }
  return deepest;
}

}  // namespace

std::shared_ptr<const chat::ChatTemplate> load_chat_template(const std::string& name_or_path,
                                                             const std::string& template_file) {
  if (template_file.empty()) {
    if (name_or_path.empty()) throw std::runtime_error("give --tokenizer NAME or --template FILE");
    return binding::load_chat_template(name_or_path);
  }
  // A folder "reads" as an empty file on Linux, which rendered as "" with exit 0.
  if (!fs::is_regular_file(template_file))
    throw std::runtime_error(template_file + ": not a template file (" +
                             (fs::exists(template_file) ? "a folder or special file" : "no such file") + ")");
  // The tokenizer, when given, supplies the special tokens; the file replaces its template.
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  if (!name_or_path.empty()) {
    auto read = binding::read_tokenizer_config(name_or_path);
    if (!read.json.is_object()) throw std::runtime_error(read.path + ": not a JSON object");
    config = std::move(read.json);
  }
  config["chat_template"] = util::read_file(template_file);
  return chat::ChatTemplate::from_tokenizer_config(config, template_file);
}

bool parse_conversation(std::string_view text, std::size_t line_number, const std::string& field, Conversation& out,
                        std::string& error) {
  const std::string prefix = "line " + std::to_string(line_number) + ": ";
  if (std::string blank = blank_line_error(text); !blank.empty()) {
    error = prefix + blank;
    return false;
  }
  try {
    out.line = nlohmann::ordered_json::parse(text);  // of duplicate keys the last counts, as in Python
  } catch (const nlohmann::json::parse_error& e) {
    error = prefix + parse_error_text(e);
    return false;
  } catch (const nlohmann::json::exception& e) {
    error = prefix + "invalid JSON (" + e.what() + ")";
    return false;
  }
  if (nesting_depth(out.line) > kMaxInputDepth) {
    error = prefix + "input nested too deeply (more than " + std::to_string(kMaxInputDepth) + " levels)";
    return false;
  }
  if (!out.line.is_object()) {
    error = prefix + "not a JSON object";
    return false;
  }
  const auto it = out.line.find(field);
  if (it == out.line.end()) {
    error = prefix + "missing field \"" + field + "\"";
    return false;
  }
  out.extra = nlohmann::ordered_json::object();
  if (it->is_array()) {
    out.messages = &*it;
    return true;
  }
  if (it->is_object()) {
    const auto m = it->find("messages");
    if (m == it->end() || !m->is_array()) {
      error = prefix + "field \"" + field + "\" has no \"messages\" list";
      return false;
    }
    out.messages = &*m;
    for (auto kv = it->begin(); kv != it->end(); ++kv)
      if (kv.key() != "messages") out.extra[kv.key()] = kv.value();
    return true;
  }
  error = prefix + "field \"" + field + "\" is neither a list of messages nor an object with \"messages\"";
  return false;
}

std::string date_error(const std::string& date) {
  const auto digits = [&](std::size_t from, std::size_t n) {
    for (std::size_t i = from; i < from + n; ++i)
      if (date[i] < '0' || date[i] > '9') return false;
    return true;
  };
  if (date.size() != 10 || date[4] != '-' || date[7] != '-' || !digits(0, 4) || !digits(5, 2) || !digits(8, 2))
    return "'" + date + "' is not a date of the form YYYY-MM-DD";
  const int y = std::stoi(date.substr(0, 4));
  const int m = std::stoi(date.substr(5, 2));
  const int d = std::stoi(date.substr(8, 2));
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (y < 1 || m < 1 || m > 12) return "'" + date + "' is not a date of the form YYYY-MM-DD (month must be 01-12)";
  const int days = kDays[m - 1] + (m == 2 && leap ? 1 : 0);
  if (d < 1 || d > days)
    return "'" + date + "' is not a real date (day must be 01-" + std::to_string(days) + " in that month)";
  return {};
}

CLI::Validator date_validator() { return CLI::Validator(date_error, "YYYY-MM-DD", "date"); }

void add_template_input_options(CLI::App& cmd, TemplateInputs& in, const TemplateInputHelp& help) {
  cmd.add_option("--tokenizer", in.tokenizer, "Tokenizer whose chat template to use: short name, HF model id, a folder holding tokenizer_config.json, or that file");
  cmd.add_option("--template", in.template_file, "A Jinja template file to use instead of the tokenizer's");
  cmd.add_option("--input", in.input, help.input)->required();
  add_max_line_bytes_option(cmd, in.max_line_bytes);
  cmd.add_option("--field", in.field, help.field)->capture_default_str();
  cmd.add_flag("--add-generation-prompt", in.add_generation_prompt, "Append the assistant prompt");
  cmd.add_option("--date", in.date, help.date)->check(date_validator());
}

void require_template_source(const TemplateInputs& in) {
  if (in.tokenizer.empty() && in.template_file.empty())
    throw CLI::ValidationError("template", "--tokenizer or --template is required");
}

}  // namespace overhead::cli
