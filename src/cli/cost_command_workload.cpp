#include "cli/cost_command_workload.hpp"

#include <exception>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "binding/chat_binding.hpp"
#include "pipe/chat_token_processor.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/source.hpp"
#include "util/line_reader.hpp"

namespace overhead::cli {

bool is_records_workload(const std::string& workload) {
  return workload.find('=') == std::string::npos && !workload.empty();
}

RecordsWorkload workload_from_records(const std::string& path, const std::string& tokenizer) {
  if (!std::filesystem::exists(path)) throw cost::CostError("--workload: " + path + ": no such file (or give in=N,out=M)");
  RecordsWorkload r;
  // The answers by line, read beside the records the pipeline parses (which keep no answer).
  std::map<std::size_t, std::string> answers;
  {
    util::LineReader in(path);
    std::string line;
    while (in.next(line)) {
      try {
        const auto j = nlohmann::json::parse(line);
        if (j.contains("answer") && j["answer"].is_string()) answers[in.line_number()] = j["answer"].get<std::string>();
      } catch (const nlohmann::json::exception&) {
        // load_source_records below dead-letters and counts the same line
      }
    }
  }
  pipe::DeadLetterSink dead;
  const auto records = pipe::load_source_records(path, 0, dead);
  const pipe::ChatTokenProcessor processor({tokenizer});
  if (!processor.load_errors().empty())
    throw cost::CostError("--workload-tokenizer " + tokenizer + ": " + processor.load_errors().begin()->second);
  const auto binding = binding::ChatBinding::load(tokenizer);
  r.left_out = dead.total();
  for (const auto& rec : records) {
    const auto answer = answers.find(rec->line);
    if (answer == answers.end()) {
      ++r.left_out;
      continue;
    }
    try {
      const auto in = processor.process(*rec, tokenizer);
      r.workload.input_tokens.push_back(static_cast<double>(in.token_count));
      r.workload.output_tokens.push_back(static_cast<double>(binding->tokenizer().count(answer->second, false)));
    } catch (const std::exception&) {
      ++r.left_out;  // e.g. Gemma-2's template refuses a system message
    }
  }
  if (r.workload.input_tokens.empty()) throw cost::CostError("--workload: " + path + ": no usable record");
  return r;
}

}  // namespace overhead::cli
