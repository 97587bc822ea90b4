#include "golden_support.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "util/line_reader.hpp"

namespace overhead::tok::golden {

const std::vector<std::string>& golden_tokenizer_names() {
  static const std::vector<std::string> names = {
      "llama-3.3-70b-instruct", "gemma-2-27b-it", "phi-4", "gemma-3", "llama-3", "cl100k", "o200k",
      "llama3", "llama3_1", "gemini", "gpt35turbo", "gpt4o"};
  return names;
}

std::string gtest_name_of(const ::testing::TestParamInfo<std::string>& param) {
  std::string s = param.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

std::string golden_path(const std::string& name, const std::string& suffix) {
  return std::string(OVERHEAD_DATA_DIR) + "/tok/golden/" + name + "." + suffix;
}

std::string corpus_path() { return std::string(OVERHEAD_DATA_DIR) + "/tok/corpus.jsonl"; }

std::vector<std::string> load_corpus() {
  std::vector<std::string> texts;
  util::LineReader reader(corpus_path());
  std::string line;
  while (reader.next(line)) {
    const auto j = nlohmann::json::parse(line);
    if (!j.contains("text") || !j["text"].is_string()) {
      throw std::runtime_error(corpus_path() + ": line " + std::to_string(reader.line_number()) +
                               ": no string field \"text\"");
    }
    texts.push_back(j["text"].get<std::string>());
  }
  return texts;
}

const std::vector<MtBenchMessage>& mtbench_messages() {
  static const std::vector<MtBenchMessage> messages = [] {
    const std::string path = std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz";
    std::vector<MtBenchMessage> out;
    util::LineReader reader(path);
    std::string line;
    while (reader.next(line)) {
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      const auto rec = nlohmann::json::parse(line);
      const auto& prompt = rec.at("prompt");
      for (std::size_t i = 0; i < prompt.size(); ++i) {
        out.push_back({rec.at("id").get<std::string>(), i, prompt[i].at("content").get<std::string>()});
      }
    }
    return out;
  }();
  return messages;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  std::size_t cut = std::min(max_bytes, text.size());
  while (cut < text.size() && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  std::string out = "\"";
  for (std::size_t i = 0; i < cut; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  if (cut < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

namespace {
std::string window(std::span<const std::uint32_t> ids, std::size_t from, std::size_t to) {
  std::ostringstream s;
  s << "[";
  if (from > 0) s << "... ";
  for (std::size_t i = from; i < std::min(to, ids.size()); ++i) s << (i > from ? "," : "") << ids[i];
  if (to < ids.size()) s << " ...";
  s << "]";
  return s.str();
}
}  // namespace

std::string describe_ids_difference(std::span<const std::uint32_t> expected, std::span<const std::uint32_t> got) {
  if (std::equal(expected.begin(), expected.end(), got.begin(), got.end())) return "";
  std::size_t i = 0;
  while (i < expected.size() && i < got.size() && expected[i] == got[i]) ++i;
  const std::size_t from = i >= 3 ? i - 3 : 0;
  const std::size_t to = i + 8;
  std::ostringstream s;
  s << "expected " << expected.size() << " ids, got " << got.size() << "; first difference at index " << i
    << ": expected " << window(expected, from, to) << " got " << window(got, from, to);
  return s.str();
}

}  // namespace overhead::tok::golden
