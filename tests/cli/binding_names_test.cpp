// Every command picks a tokenizer and its chat template by the binding's one rule
// (binding/chat_binding.hpp): the HF ids of the bundled sets work in `tokenize`, `tokenize --chat`
// and `template` as they do in the pipeline, and a chat_template list without a "default" entry
// is refused as transformers refuses it, by the commands and by the pipeline alike.
#include <gtest/gtest.h>

#include <vector>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;
namespace fs = std::filesystem;

// Runs with the bundled sets as the models folder and an empty HF cache, so an HF id can only
// resolve through the bundled-set rule.
RunResult run_with_bundled_sets(const std::string& args) {
  const fs::path hf_home = temp_dir("binding_hf_home");
  const std::string models = std::getenv("OVERHEAD_MODELS") ? std::getenv("OVERHEAD_MODELS") : OVERHEAD_MODELS_DIR;
  return run_overhead_env("OVERHEAD_MODELS='" + models + "' HF_HOME='" + hf_home.string() + "'", args);
}

struct HfId {
  const char* id;
  const char* bundled;
};
constexpr HfId kIds[] = {{"microsoft/phi-4", "phi-4"},
                         {"google/gemma-2-27b-it", "gemma-2-27b-it"},
                         {"meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"}};

TEST(BindingNames, HfIdsWorkInEveryTokenizerCommand) {
  const fs::path dir = temp_dir("binding_names");
  const std::string chat = write_file(dir / "chat.jsonl", "{\"messages\":[{\"role\":\"user\",\"content\":\"こんにちは\"}]}\n");
  const std::string text = write_file(dir / "text.jsonl", "{\"text\":\"こんにちは world\"}\n");
  for (const auto& [id, bundled] : kIds) {
    if (!have_tokenizer(bundled)) GTEST_SKIP() << "tokenizer files not fetched: " << bundled;
    for (const std::string& cmd : std::vector<std::string>{"tokenize --input '" + text + "'", "tokenize --chat --input '" + chat + "'",
                                  "template --input '" + chat + "'"}) {
      const RunResult by_id = run_with_bundled_sets(cmd + " --tokenizer " + id);
      const RunResult by_name = run_with_bundled_sets(cmd + " --tokenizer " + bundled);
      EXPECT_EQ(by_id.exit_code, 0) << id << ": " << cmd << ": " << by_id.err;
      ASSERT_EQ(by_id.lines.size(), 1u) << id << ": " << cmd << ": " << by_id.err;
      EXPECT_EQ(by_id.lines, by_name.lines) << id << ": " << cmd;
      EXPECT_EQ(by_id.lines[0].find("\"error\""), std::string::npos) << by_id.lines[0];
    }
  }
}

// A folder holding phi-4's tokenizer.json and a config whose chat_template is a list of named
// templates; `with_default` adds the entry named "default" after another one.
fs::path named_template_folder(const std::string& tag, bool with_default) {
  const fs::path dir = temp_dir(tag);
  const std::string models = std::getenv("OVERHEAD_MODELS") ? std::getenv("OVERHEAD_MODELS") : OVERHEAD_MODELS_DIR;
  fs::copy_file(fs::path(models) / "phi-4" / "tokenizer.json", dir / "tokenizer.json");
  std::string list = R"([{"name":"tool_use","template":"TOOLS{{ messages[0].content }}"})";
  if (with_default) list += R"(,{"name":"default","template":"DEFAULT{{ messages[0].content }}"})";
  list += "]";
  write_file(dir / "tokenizer_config.json", R"({"eos_token":"<|im_end|>","chat_template":)" + list + "}");
  return dir;
}

TEST(BindingNames, ANamedTemplateListUsesItsDefaultEntryOrIsRefused) {
  if (!have_tokenizer("phi-4")) GTEST_SKIP() << "tokenizer files not fetched";
  const fs::path dir = temp_dir("binding_list_input");
  const std::string chat = write_file(dir / "chat.jsonl", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n");

  const fs::path with = named_template_folder("binding_with_default", true);
  const RunResult ok = run_overhead("template --input '" + chat + "' --tokenizer '" + with.string() + "'");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  ASSERT_EQ(ok.lines.size(), 1u) << ok.err;
  EXPECT_EQ(ok.lines[0], "{\"text\":\"DEFAULThi\"}");
  const RunResult ok_chat = run_overhead("tokenize --chat --input '" + chat + "' --tokenizer '" + with.string() + "'");
  EXPECT_EQ(ok_chat.exit_code, 0) << ok_chat.err;

  // Without a "default" entry transformers raises; the first entry is never taken silently.
  const fs::path without = named_template_folder("binding_without_default", false);
  for (const std::string& cmd : std::vector<std::string>{"template", "tokenize --chat"}) {
    const RunResult r = run_overhead(cmd + " --input '" + chat + "' --tokenizer '" + without.string() + "'");
    EXPECT_NE(r.exit_code, 0) << cmd;
    EXPECT_NE(r.err.find("no \"default\" entry"), std::string::npos) << cmd << ": " << r.err;
    for (const auto& line : r.lines) EXPECT_EQ(line.find("TOOLS"), std::string::npos) << cmd << ": " << line;
  }
}

}  // namespace
