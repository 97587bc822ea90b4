// Engine behaviours the goldens do not reach directly: compile once / render from many threads,
// tokenizer_config handling, pinned dates.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "chat/chat_template.hpp"

namespace {

using overhead::chat::ChatTemplate;
using overhead::chat::RenderOptions;
using overhead::chat::TemplateError;
using nlohmann::json;

TEST(ChatEngine, RendersConcurrentlyFromOneCompiledTemplate) {
  auto t = ChatTemplate::compile(
      "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}{% if not loop.last %}|{% endif %}{% endfor %}", "t");
  const json messages = json::parse(R"([{"role":"user","content":" a "},{"role":"assistant","content":"b"}])");
  std::vector<std::thread> threads;
  std::vector<int> bad(4, 0);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 2000; ++k)
        if (t->render(messages, RenderOptions{}) != "<user>a|<assistant>b") ++bad[static_cast<std::size_t>(i)];
    });
  for (auto& th : threads) th.join();
  for (int b : bad) EXPECT_EQ(b, 0);
}

TEST(ChatEngine, FromTokenizerConfigTakesTokensAndDefaultTemplate) {
  const json cfg = json::parse(R"({
    "bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>",
    "chat_template": [{"name": "tool_use", "template": "tools"}, {"name": "default", "template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"}]})");
  auto t = ChatTemplate::from_tokenizer_config(cfg, "cfg");
  EXPECT_EQ(t->render(json::parse(R"([{"role":"user","content":"x"}])"), RenderOptions{}), "<s>x</s>");
  EXPECT_THROW(ChatTemplate::from_tokenizer_config(json::parse(R"({"bos_token":"<s>"})"), "none"), TemplateError);
}

TEST(ChatEngine, PinnedDateDrivesStrftimeNow) {
  auto t = ChatTemplate::compile("{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A') }}", "t");
  RenderOptions o;
  o.date = "2024-07-26";
  EXPECT_EQ(t->render(json::array(), o), "26 Jul 2024|Friday");
}

TEST(ChatEngine, SyntaxErrorsAreTemplateErrors) {
  EXPECT_THROW(ChatTemplate::compile("{% for x in %}", "t"), TemplateError);
  EXPECT_THROW(ChatTemplate::compile("{% if x %}", "t"), TemplateError);
  EXPECT_THROW(ChatTemplate::compile("{{ 'unterminated }}", "t"), TemplateError);
  EXPECT_THROW(ChatTemplate::compile("{% include 'x' %}", "t"), TemplateError);
}

TEST(ChatEngine, GemmaTwoRejectsSystemWithItsOwnMessage) {
  auto t = ChatTemplate::compile("{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}", "gemma");
  try {
    t->render(json::parse(R"([{"role":"system","content":"s"}])"), RenderOptions{});
    FAIL() << "no error";
  } catch (const TemplateError& e) {
    EXPECT_EQ(e.message(), "System role not supported");
  }
}

// tojson(ensure_ascii=True) is json.dumps(ensure_ascii=True): DEL is outside ' '..'~' and comes out
// as \u007f; without ensure_ascii it stays raw. Expected strings from CPython 3.11's json.dumps via
// the transformers-style Jinja2 set-up (the engine kept DEL raw in both).
TEST(ChatEngine, TojsonEscapesDelOnlyWithEnsureAscii) {
  auto t = ChatTemplate::compile("{{ messages[0].content|tojson(ensure_ascii=true) }}|{{ messages[0].content|tojson }}", "t");
  const json messages = json::parse("[{\"role\":\"user\",\"content\":\"a\\u007fb\\u00e9\\ud83d\\ude00\"}]");
  EXPECT_EQ(t->render(messages, RenderOptions{}),
            "\"a\\u007fb\\u00e9\\ud83d\\ude00\"|\"a\x7f" "b\xc3\xa9\xf0\x9f\x98\x80\"");
}

}  // namespace
