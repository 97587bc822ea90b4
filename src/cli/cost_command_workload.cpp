#include "cli/cost_command_workload.hpp"

#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "binding/chat_binding.hpp"
#include "cost/length_distribution.hpp"
#include "pipe/chat_token_processor.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/source.hpp"
#include "util/line_reader.hpp"

namespace overhead::cli {

bool is_records_workload(const std::string& workload) {
  return workload.find('=') == std::string::npos && !workload.empty();
}

std::optional<cost::Workload> workload_from_pairs(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  util::LineReader in(path);
  std::string line;
  cost::Workload w;
  const auto number = [](const nlohmann::json& j, const char* a, const char* b) -> std::optional<double> {
    for (const char* key : {a, b})
      if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
    return std::nullopt;
  };
  while (in.next(line)) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    const auto x = j.is_object() ? number(j, "input_tokens", "in") : std::nullopt;
    const auto y = j.is_object() ? number(j, "output_tokens", "out") : std::nullopt;
    if (!x || !y) {
      if (w.input_tokens.empty()) return std::nullopt;  // not a pairs file: the seed's records
      throw cost::CostError("--workload " + path + ":" + std::to_string(in.line_number()) +
                            ": expected {\"input_tokens\": N, \"output_tokens\": M} like the lines before it");
    }
    if (!(*x >= 1 && *x <= 1e7 && *y >= 1 && *y <= 1e7))
      throw cost::CostError("--workload " + path + ":" + std::to_string(in.line_number()) +
                            ": token counts must be in 1..10000000");
    w.input_tokens.push_back(*x);
    w.output_tokens.push_back(*y);
  }
  if (w.input_tokens.empty()) return std::nullopt;
  return w;
}

namespace {

// NAME or NAME,in=N,out=M when NAME.json is in `named.dir`; empty otherwise.
std::optional<cost::Workload> named_workload(const std::string& text, const NamedDraws& named, std::string& origin) {
  const auto comma = text.find(',');
  const std::string name = text.substr(0, comma);
  if (name.find('=') != std::string::npos || named.dir.empty()) return std::nullopt;
  auto d = cost::load_length_distribution(name, named.dir);
  if (!d) return std::nullopt;
  if (comma != std::string::npos) {
    const auto means = cost::parse_workload(text.substr(comma + 1));
    d = cost::with_means(*d, means.input_tokens[0], means.output_tokens[0]);
  }
  auto w = cost::draw_workload(*d, named.n, named.seed);
  char means[96];
  std::snprintf(means, sizeof means, "mean %.1f in, %.1f out", d->input.mean, d->output.mean);
  origin = text + " (" + std::to_string(w.input_tokens.size()) + " draws of " + (named.dir / (name + ".json")).filename().string() +
           ", " + means + ", seed " + std::to_string(named.seed) + ")";
  return w;
}

}  // namespace

cost::Workload load_workload(const std::string& text, const std::string& tokenizer, std::string& origin,
                             const NamedDraws& named) {
  origin = text;
  if (!std::filesystem::exists(text))
    if (auto w = named_workload(text, named, origin)) return *w;
  if (!is_records_workload(text)) return cost::parse_workload(text);
  if (auto pairs = workload_from_pairs(text)) {
    origin = text + " (" + std::to_string(pairs->input_tokens.size()) + " token-count pairs)";
    return *pairs;
  }
  const auto w = workload_from_records(text, tokenizer);
  origin = text + " (" + std::to_string(w.workload.input_tokens.size()) + " records counted with " + tokenizer + ", " +
           std::to_string(w.left_out) + " left out)";
  return w.workload;
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
