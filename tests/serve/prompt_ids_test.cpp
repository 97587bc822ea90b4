// Tokenize once, through the gateway: with `--decoder openai:URL,dialect=vllm` the engine gets the
// prompt as the ids we encoded, exactly the chat template's tokens with nothing added, so each
// seed tokenizer's template reaches the engine with one BOS where it writes one (Llama-3.3,
// Gemma-2) and none where it writes none (Phi-4); the engine's usage.prompt_tokens is checked
// against what was sent, a disagreement is counted in /metrics and kept in the record. The engine
// is scripted (tests/engine/scripted_openai_server.hpp): it records what it got and says what a
// test needs; the real engine's side is tests/engine/openai_engine_test.cpp.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "backends/open.hpp"
#include "chat_fixture.hpp"
#include "engine/scripted_openai_server.hpp"
#include "ports/store.hpp"
#include "tok/tokenizer.hpp"

namespace {

using overhead::testing::ScriptedOpenAiServer;
using nlohmann::json;
using namespace std::chrono_literals;

class PromptIdsTest : public overhead::serve::testing::ChatServeTest {
 protected:
  // An engine that answers "ok" and says it read the prompt's ids plus `extra` tokens.
  void start_engine(int extra) {
    engine_.script = [extra](const std::string& body, std::chrono::microseconds&) {
      const json request = json::parse(body);
      const int read = static_cast<int>(request["prompt"].is_array() ? request["prompt"].size() : 0) + extra;
      return std::vector<std::string>{ScriptedOpenAiServer::text_event("ok"), ScriptedOpenAiServer::text_event("", "stop"),
                                      ScriptedOpenAiServer::usage_event(read, 1), ScriptedOpenAiServer::done_event()};
    };
    overhead::serve::ServerOptions o;
    o.models = {"phi-4", "llama-3.3-70b-instruct", "gemma-2-27b-it"};
    o.workers.worker.decoder = overhead::backends::open_decoder("openai:" + engine_.url() + ",dialect=vllm");
    start(o);
  }
  std::string metrics() {
    auto r = client_->Get("/metrics");
    return r ? r->body : std::string();
  }
  ScriptedOpenAiServer engine_;
};

TEST_F(PromptIdsTest, EachSeedTemplateReachesTheEngineAsItsOwnTokensWithOneBosAtMost) {
  start_engine(0);
  struct Case {
    const char* model;
    std::uint32_t bos;  // the tokenizer's BOS id
    long want_bos;      // how many the engine must get: the template's own
  };
  for (const Case& c : {Case{"llama-3.3-70b-instruct", 128000, 1}, Case{"gemma-2-27b-it", 2, 1}, Case{"phi-4", 100257, 0}}) {
    SCOPED_TRACE(c.model);
    const json answer = post("/v1/chat/completions",
                             json{{"model", c.model}, {"messages", {{{"role", "user"}, {"content", "Hello there"}}}}}.dump(), 200);
    EXPECT_EQ(answer["choices"][0]["message"]["content"], "ok");
    const json sent = engine_.last_body();
    ASSERT_TRUE(sent["prompt"].is_array()) << sent.dump();
    const auto ids = sent["prompt"].get<std::vector<std::uint32_t>>();
    EXPECT_EQ(std::count(ids.begin(), ids.end(), c.bos), c.want_bos) << sent["prompt"].dump();
    if (c.want_bos) {
      EXPECT_EQ(ids.front(), c.bos);
    }
    // The ids are the rendered prompt's: decoded, they hold the message and end with the generation prompt.
    const std::string text = overhead::tok::Tokenizer::load(c.model)->decode(ids, false);
    EXPECT_NE(text.find("Hello there"), std::string::npos) << text;
  }
  const std::string m = metrics();
  EXPECT_NE(m.find("overhead_engine_prompt_tokens_checked_total{tokenizer=\"phi-4\"} 1"), std::string::npos) << m;
  EXPECT_NE(m.find("overhead_engine_prompt_token_mismatches_total{tokenizer=\"phi-4\"} 0"), std::string::npos) << m;
}

TEST_F(PromptIdsTest, AnEngineThatReadsAnotherNumberOfTokensIsCountedAndRecorded) {
  start_engine(1);  // as an engine that put its own BOS before ours
  const json answer = post("/v1/chat/completions",
                           json{{"model", "llama-3.3-70b-instruct"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}}.dump(), 200);
  EXPECT_EQ(answer["choices"][0]["finish_reason"], "stop");
  const std::string m = metrics();
  EXPECT_NE(m.find("overhead_engine_prompt_token_mismatches_total{tokenizer=\"llama-3.3-70b-instruct\"} 1"),
            std::string::npos)
      << m;
  stop();  // the pipeline stores what it published
  std::vector<overhead::ports::Record> rows;
  overhead::backends::open_store(store_url_)->scan("serve", [&](const overhead::ports::Record& r) { rows.push_back(r); });
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(rows[0].prompt_tokens_sent, 0);
  ASSERT_TRUE(rows[0].engine_prompt_tokens.has_value());
  EXPECT_EQ(*rows[0].engine_prompt_tokens, rows[0].prompt_tokens_sent + 1);
}

}  // namespace
