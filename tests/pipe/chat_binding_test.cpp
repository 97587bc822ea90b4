// The tokenizer + chat template binding: HF ids of the bundled sets are names too, an item keeps
// its name, and rendering from the values converted once per record counts exactly what
// rendering the JSON did.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "binding/chat_binding.hpp"
#include "pipe/chat_token_processor.hpp"
#include "ports/errors.hpp"
#include "pipe/work_item.hpp"
#include "util/line_reader.hpp"

namespace overhead::pipe {
using ports::ItemError;
namespace {

namespace fs = std::filesystem;

class ChatBindingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(fs::path(OVERHEAD_MODELS_DIR) / "phi-4" / "tokenizer.json")) GTEST_SKIP() << "no tokenizer files";
    ::setenv("OVERHEAD_MODELS", OVERHEAD_MODELS_DIR, 1);
  }
};

TEST_F(ChatBindingTest, BundledHfIdsAreNames) {
  EXPECT_EQ(binding::bundled_tokenizer_name("microsoft/phi-4"), "phi-4");
  EXPECT_EQ(binding::bundled_tokenizer_name("google/gemma-2-27b-it"), "gemma-2-27b-it");
  EXPECT_EQ(binding::bundled_tokenizer_name("meta-llama/Llama-3.3-70B-Instruct"), "llama-3.3-70b-instruct");
  EXPECT_EQ(binding::bundled_tokenizer_name("phi-4"), "phi-4");
  const auto b = binding::ChatBinding::load("microsoft/phi-4");
  EXPECT_EQ(b->name(), "microsoft/phi-4");
  EXPECT_EQ(b->tokenizer().encode("Hello"), binding::ChatBinding::load("phi-4")->tokenizer().encode("Hello"));
}

TEST_F(ChatBindingTest, AnItemMayNameALoadedSetByItsHfIdAndValuesRenderAsJsonDid) {
  const ChatTokenProcessor processor({"phi-4", "llama-3.3-70b-instruct", "gemma-2-27b-it"});
  ASSERT_TRUE(processor.load_errors().empty());
  const auto phi = binding::ChatBinding::load("phi-4");
  util::LineReader reader(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz");
  std::string line;
  for (int n = 0; n < 40 && reader.next(line); ++n) {
    const auto rec = parse_source_line(line, reader.line_number());
    const auto by_short = processor.process(*rec, "phi-4").token_count;
    EXPECT_EQ(processor.process(*rec, "microsoft/phi-4").token_count, by_short);
    // The pre-binding path: render the JSON prompt, then count.
    chat::RenderOptions o;
    o.add_generation_prompt = false;
    const std::string text = phi->chat_template().render(rec->prompt, o);
    EXPECT_EQ(by_short, static_cast<std::int64_t>(phi->tokenizer().count(text, true))) << rec->id;
    EXPECT_EQ(processor.process(*rec, "meta-llama/Llama-3.3-70B-Instruct").token_count,
              processor.process(*rec, "llama-3.3-70b-instruct").token_count);
  }
  const auto rec = parse_source_line(line, 1);
  EXPECT_THROW((void)processor.process(*rec, "google/gemma-3-27b-it"), ItemError);
}

// A completion's prompt text goes through no template: counted and, for an engine that takes ids,
// encoded with the tokenizer's special tokens added (Llama-3's BOS), as HF's tokenizer(text) does.
TEST_F(ChatBindingTest, ACompletionsPromptTextIsEncodedAsItIsWithTheTokenizersBos) {
  const ChatTokenProcessor processor({"llama-3.3-70b-instruct"});
  const auto llama = binding::ChatBinding::load("llama-3.3-70b-instruct");
  SourceRecord rec;
  rec.id = "c";
  rec.model = "m";
  rec.prompt_text = "The sea is wide";
  const auto want = llama->tokenizer().encode(*rec.prompt_text, true);
  ASSERT_EQ(want.front(), 128000u);  // <|begin_of_text|>
  EXPECT_EQ(processor.process(rec, "llama-3.3-70b-instruct").token_count, static_cast<std::int64_t>(want.size()));
  const auto ids = processor.process_for_decoder(rec, "llama-3.3-70b-instruct", ports::PromptForm::ids);
  EXPECT_EQ(ids.prompt, *rec.prompt_text);
  EXPECT_EQ(std::vector<std::uint32_t>(ids.prompt_ids.begin(), ids.prompt_ids.end()), std::vector<std::uint32_t>(want.begin(), want.end()));
  EXPECT_EQ(ids.prompt_tokens_sent, static_cast<std::int64_t>(want.size()));
  const auto text = processor.process_for_decoder(rec, "llama-3.3-70b-instruct", ports::PromptForm::text);
  EXPECT_EQ(text.prompt, *rec.prompt_text);
  EXPECT_EQ(text.prompt_tokens_sent, static_cast<std::int64_t>(want.size()));
}

// The template-only path (the CLI's `template`) and the full binding take the same template of a
// name, HF ids included, and both refuse a named list without "default" as transformers does.
TEST_F(ChatBindingTest, TemplateOnlyAndFullBindingPickTheSameTemplate) {
  chat::RenderOptions o;
  const nlohmann::json messages = nlohmann::json::parse(R"([{"role":"user","content":"hi"}])");
  for (const char* name : {"phi-4", "microsoft/phi-4", "google/gemma-2-27b-it"}) {
    const auto full = binding::ChatBinding::load(name);
    const auto only = binding::load_chat_template(name);
    EXPECT_EQ(only->render(messages, o), full->chat_template().render(messages, o)) << name;
  }
  const fs::path dir = fs::temp_directory_path() / ("binding_list_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(OVERHEAD_MODELS_DIR) / "phi-4" / "tokenizer.json", dir / "tokenizer.json",
                fs::copy_options::overwrite_existing);
  {
    std::ofstream(dir / "tokenizer_config.json")
        << R"({"chat_template":[{"name":"tool_use","template":"T"},{"name":"rag","template":"R"}]})";
  }
  EXPECT_THROW((void)binding::ChatBinding::load(dir.string()), chat::TemplateError);
  EXPECT_THROW((void)binding::load_chat_template(dir.string()), chat::TemplateError);
  fs::remove_all(dir);
}

// A tokenizer whose chat template does not compile: its items are template errors naming the
// template's line, not "unknown tokenizer" (the tokenizer itself loads).
TEST_F(ChatBindingTest, ATemplateThatDoesNotCompileIsATemplateErrorOfEachItem) {
  const fs::path dir = fs::temp_directory_path() / ("binding_bad_template_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(OVERHEAD_MODELS_DIR) / "phi-4" / "tokenizer.json", dir / "tokenizer.json",
                fs::copy_options::overwrite_existing);
  { std::ofstream(dir / "tokenizer_config.json") << R"({"chat_template":"{% for m in messages %}{{ m.content }"})"; }
  const ChatTokenProcessor processor({dir.string()});
  ASSERT_EQ(processor.load_errors().size(), 1u);
  const auto rec = parse_source_line(R"({"id":"1","model":"m","answer":"a","usage":null,"prompt":[{"role":"user","content":"hi"}]})", 1);
  try {
    (void)processor.process(*rec, dir.string());
    ADD_FAILURE() << "no error";
  } catch (const ItemError& e) {
    EXPECT_EQ(e.kind(), "template_error");
    EXPECT_NE(std::string(e.what()).find("does not compile"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":1:"), std::string::npos) << e.what();  // the template's line
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
