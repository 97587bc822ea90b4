// Bodies a hostile or careless client sends, through a real gateway with its in-process pipeline:
// nesting past the one depth limit is refused before anything copies it (depth 200,000 used to
// overflow the stack and take the whole gateway down); parameters the gateway cannot honour are
// refused by name; tools reach the chat template, so prompt_tokens counts them as `tokenize --chat`
// does; ids outside the vocabulary are refused; request ids are the kernel's random bytes.
#include <httplib.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "chat_fixture.hpp"
#include "tok/tokenizer.hpp"
#include "util/json_depth.hpp"

// While set, getrandom(2) answers with this byte repeated: the ids a gateway prints must then be
// exactly those bytes, which shows every bit of them comes from the kernel's CSPRNG and none from a
// userspace engine. Defined here, it takes the place of the C library's getrandom for the whole test.
static std::atomic<int> g_random_pattern{-1};
extern "C" ssize_t getrandom(void* buf, size_t len, unsigned flags) {
  const int pattern = g_random_pattern.load();
  if (pattern >= 0) {
    std::memset(buf, pattern, len);
    return static_cast<ssize_t>(len);
  }
  return static_cast<ssize_t>(::syscall(SYS_getrandom, buf, len, flags));
}

namespace {

using HostileTest = overhead::serve::testing::ChatServeTest;
using nlohmann::json;

std::string nested(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string chat_with(const std::string& extra_member) {
  return R"({"model":"phi-4","messages":[{"role":"user","content":"hi")" + extra_member + "}]}";
}

TEST_F(HostileTest, DeepNestingAnywhereIsRefusedBeforeAnyCopyAndTheGatewayStaysUp) {
  start();
  // 200,000 levels in a key other than content (400 KB): this crashed the gateway.
  const std::string deep = nested(200000);
  for (const char* path : {"/v1/chat/completions", "/v1/requests"}) {
    const json e = post(path, chat_with(R"(,"x":)" + deep), 400);
    EXPECT_EQ(e["error"]["code"], "nested_too_deep") << path;
  }
  EXPECT_EQ(post("/v1/tokenize", R"({"model":"phi-4","prompt":"a","x":)" + deep + "}", 400)["error"]["code"], "nested_too_deep");
  EXPECT_EQ(post("/v1/render", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}],"x":)" + deep + "}", 400)["error"]["code"],
            "nested_too_deep");
  EXPECT_EQ(post("/v1/detokenize", R"({"model":"phi-4","tokens":)" + deep + "}", 400)["error"]["code"], "nested_too_deep");
  // One level past the limit is refused; the limit itself passes the gateway and the worker alike.
  const std::size_t limit = overhead::util::kMaxJsonDepth;
  // The body, messages, the message: 3 levels before the value of "x".
  EXPECT_EQ(post("/v1/chat/completions", chat_with(R"(,"x":)" + nested(limit - 2)), 400)["error"]["code"], "nested_too_deep");
  const json ok = post("/v1/chat/completions", chat_with(R"(,"x":)" + nested(limit - 3)), 200);
  EXPECT_GT(ok["usage"]["prompt_tokens"].get<int>(), 0);
}

TEST_F(HostileTest, ParametersTheGatewayCannotHonourAreRefusedByName) {
  start();
  struct Case {
    std::string member, param;
  };
  const Case refused[] = {
      {R"("n":2)", "n"},
      {R"("n":0)", "n"},
      {R"("logprobs":true)", "logprobs"},
      {R"("top_logprobs":3)", "top_logprobs"},
      {R"("response_format":{"type":"xml"})", "response_format.type"},
      {R"("response_format":{"type":"json_schema","json_schema":{"name":"x y","schema":{}}})", "response_format.json_schema.name"},
      {R"("tools":{})", "tools"},
      {R"("tools":[{"type":"retrieval"}])", "tools[0].type"},
      {R"("tools":[{"type":"function","function":{}}])", "tools[0].function.name"},
  };
  for (const auto& c : refused) {
    const std::string body = R"({"model":"phi-4",)" + c.member + R"(,"messages":[{"role":"user","content":"a"}]})";
    for (const char* path : {"/v1/chat/completions", "/v1/requests"}) {
      const json e = post(path, body, 400);
      EXPECT_EQ(e["error"]["param"], c.param) << path << " " << body;
    }
  }
  // The harmless forms pass: one choice, no log probabilities, plain text.
  post("/v1/chat/completions", R"({"model":"phi-4","n":1,"logprobs":false,"response_format":{"type":"text"},"messages":[{"role":"user","content":"a"}]})",
       200);
}

// `overhead tokenize --chat` on one conversation with its tools ({"conversation": {"messages", "tools"}}):
// the number of ids it prints.
std::size_t cli_chat_count(const std::filesystem::path& dir, const std::string& conversation) {
  const auto input = dir / "conversation.jsonl";
  std::ofstream(input) << conversation << "\n";
  const std::string cmd =
      std::string(OVERHEAD_BINARY) + " tokenize --chat --tokenizer llama-3.3-70b-instruct --field conversation --input " + input.string();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return 0;
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  return json::parse(out).at("ids").size();
}

TEST_F(HostileTest, ToolsReachTheChatTemplateAndCountInPromptTokens) {
  overhead::serve::ServerOptions o;
  o.models = {"llama-3.3-70b-instruct"};
  start(std::move(o));
  const std::string messages = R"([{"role":"user","content":"What is the weather in Paris?"}])";
  const std::string tools =
      R"([{"type":"function","function":{"name":"get_weather","description":"Current weather of a city",)"
      R"("parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";
  const json plain = post("/v1/chat/completions", R"({"model":"llama-3.3-70b-instruct","messages":)" + messages + "}", 200);
  const json with_tools =
      post("/v1/chat/completions", R"({"model":"llama-3.3-70b-instruct","messages":)" + messages + R"(,"tools":)" + tools + "}", 200);
  const std::size_t expected = cli_chat_count(dir_, R"({"conversation":{"messages":)" + messages + R"(,"tools":)" + tools + "}}");
  EXPECT_GT(with_tools["usage"]["prompt_tokens"].get<std::size_t>(), plain["usage"]["prompt_tokens"].get<std::size_t>() + 20);
  EXPECT_EQ(with_tools["usage"]["prompt_tokens"].get<std::size_t>(), expected);
  // /v1/render and /v1/tokenize render the same prompt.
  const json rendered = post("/v1/render", R"({"model":"llama-3.3-70b-instruct","messages":)" + messages + R"(,"tools":)" + tools + "}", 200);
  EXPECT_NE(rendered["prompt"].get<std::string>().find("get_weather"), std::string::npos);
  const json counted = post("/v1/tokenize", R"({"model":"llama-3.3-70b-instruct","messages":)" + messages + R"(,"tools":)" + tools + "}", 200);
  EXPECT_EQ(counted["count"].get<std::size_t>(), expected);
}

TEST_F(HostileTest, DetokenizeRefusesIdsOutsideTheVocabulary) {
  start();
  const json e = post("/v1/detokenize", R"({"model":"phi-4","tokens":[1,2,4294967295]})", 400);
  EXPECT_EQ(e["error"]["param"], "tokens[2]");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("outside the vocabulary"), std::string::npos);
  // The first id past the vocabulary is refused, the last one in it decodes.
  const std::size_t vocab = overhead::tok::Tokenizer::load("phi-4")->vocab_size();
  EXPECT_EQ(post("/v1/detokenize", json{{"model", "phi-4"}, {"tokens", {vocab}}}.dump(), 400)["error"]["param"], "tokens[0]");
  post("/v1/detokenize", json{{"model", "phi-4"}, {"tokens", {1, 2, vocab - 1}}}.dump(), 200);
}

TEST_F(HostileTest, RequestIdsAreTheKernelsRandomBytes) {
  start();
  g_random_pattern = 0xa5;
  const json sync = post("/v1/chat/completions", chat_with(""), 200);
  auto r = client_->Post("/v1/requests", chat_with(""), "application/json");
  g_random_pattern = -1;
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 202) << r->body;
  std::string hex;
  for (int i = 0; i < 16; ++i) hex += "a5";
  EXPECT_EQ(sync["id"], "chatcmpl-" + hex);
  EXPECT_EQ(json::parse(r->body)["id"], "req_" + hex);
}

}  // namespace
