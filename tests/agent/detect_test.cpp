// Detection from chat templates: on every template of the fetched models (models/*/tokenizer_config.json,
// and its raw/ sets), and on the marker lines of the templates of the families we have no fetched
// model of (written here from what each model's template renders).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "agent/answer_parser.hpp"
#include "agent/detect.hpp"

namespace overhead::agent {
namespace {

std::string template_of(const std::filesystem::path& config) {
  std::ifstream in(config);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object() || !j.contains("chat_template")) return {};
  const auto& t = j["chat_template"];
  if (t.is_string()) return t.get<std::string>();
  std::string all;  // a list of named templates: the default and tool_use ones together
  if (t.is_array()) {
    for (const auto& e : t) {
      if (e.contains("template") && e["template"].is_string()) all += e["template"].get<std::string>();
    }
  }
  return all;
}

TEST(Detect, FetchedModelsTemplates) {
  const std::map<std::string, DetectedParsers> expected = {
      {"llama-3.3-70b-instruct", {"llama3_json", ""}},
      {"phi-4", {"", ""}},  // phi-4 (14B) renders no tools; Phi-4-mini's template does (below)
      {"gemma-2-27b-it", {"", ""}},
      {"raw/llama3", {"", ""}},
      {"raw/llama3_1", {"", ""}},
      {"raw/gemma3", {"", ""}},
      {"raw/gemini", {"", ""}},
  };
  const std::filesystem::path root = OVERHEAD_MODELS_DIR;
  if (!std::filesystem::exists(root)) GTEST_SKIP() << "no fetched models at " << root;
  // Every fetched template is detected (and printed); those listed above must match.
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.path().filename() != "tokenizer_config.json") continue;
    const std::string dir = std::filesystem::relative(entry.path().parent_path(), root).generic_string();
    const std::string tmpl = template_of(entry.path());
    if (tmpl.empty()) continue;  // a tokenizer without a chat template (raw/gpt4o, raw/gpt35turbo)
    const DetectedParsers got = detect_parsers(tmpl);
    std::printf("%-28s tool=%-12s reasoning=%s\n", dir.c_str(), got.tool_parser.empty() ? "-" : got.tool_parser.c_str(),
                got.reasoning_parser.empty() ? "-" : got.reasoning_parser.c_str());
    if (const auto it = expected.find(dir); it != expected.end()) {
      EXPECT_EQ(got, it->second) << dir;
      ++seen;
    }
  }
  EXPECT_GT(seen, 0u);
}

TEST(Detect, FamilyMarkersInTemplates) {
  struct Row {
    const char* model;
    std::string tmpl;
    DetectedParsers want;
  };
  const std::vector<Row> rows = {
      {"Qwen2.5", "{%- if tools %}...<tools>{{ tool | tojson }}</tools>... <tool_call>\\n{\"name\": ...}</tool_call>", {"hermes", ""}},
      {"Qwen3", "<tool_call>...</tool_call>{%- if enable_thinking is false %}<think>\\n\\n</think>{% endif %}", {"hermes", "think"}},
      {"Mistral", "{{- '[AVAILABLE_TOOLS]' + tools|tojson + '[/AVAILABLE_TOOLS]' }}{{ '[TOOL_CALLS]' }}", {"mistral", ""}},
      {"DeepSeek-V3", "{{'<\uFF5Ctool\u2581calls\u2581begin\uFF5C><\uFF5Ctool\u2581call\u2581begin\uFF5C>'}}", {"deepseek_v3", ""}},
      {"DeepSeek-R1", "<\uFF5Ctool\u2581calls\u2581begin\uFF5C>{% set content = content.split('</think>')[-1] %}<think>\\n", {"deepseek_v3", "think"}},
      {"gpt-oss", "<|start|>assistant<|channel|>analysis<|message|>...to=functions.{{ name }}", {"gpt_oss", "gpt_oss"}},
      {"Phi-4-mini", "{{ '<|system|>' + message['content'] + '<|tool|>' + message['tools'] + '<|/tool|>' + '<|end|>' }}", {"phi4", ""}},
      {"Llama 3.2", "{{- '<|start_header_id|>ipython<|end_header_id|>' }} {\"name\": function name, \"parameters\": dictionary}", {"llama3_json", ""}},
      {"QwQ", "{%- if add_generation_prompt %}<|im_start|>assistant\\n<think>\\n{%- endif %}", {"", "think"}},
      {"plain", "{% for m in messages %}{{ m.content }}{% endfor %}", {"", ""}},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(detect_parsers(r.tmpl), r.want) << r.model;
    if (!r.want.tool_parser.empty()) {
      EXPECT_TRUE(is_tool_parser(r.want.tool_parser));
    }
  }
}

}  // namespace
}  // namespace overhead::agent
