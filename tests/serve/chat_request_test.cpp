// The chat/completions body checks: a valid request passes through, and each schema error is a
// 400 whose param names the field.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve/chat_request.hpp"

namespace {

using overhead::serve::parse_chat_request;
using overhead::serve::RequestError;
using Json = nlohmann::ordered_json;

// The error a body raises (status, param, code), or an empty param and status 0 when it passes.
overhead::serve::ApiError error_of(const std::string& body) {
  try {
    (void)parse_chat_request(Json::parse(body), 3);
  } catch (const RequestError& e) {
    return e.error;
  }
  return {0, "", "", "", ""};
}

TEST(ChatRequest, AValidRequestPassesThrough) {
  const auto r = parse_chat_request(Json::parse(R"({"model":"phi-4","stream":true,"max_tokens":16,"temperature":0.5,
    "messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"hi"}]},
                {"role":"assistant","content":null,"tool_calls":[]}]})"), 3);
  EXPECT_EQ(r.model, "phi-4");
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_EQ(r.messages.size(), 3u);
  EXPECT_EQ(r.messages[1]["content"][0]["text"], "hi");
}

TEST(ChatRequest, SamplingFieldsPassThroughAsSent) {
  const auto r = parse_chat_request(Json::parse(R"({"model":"m","max_completion_tokens":9,"max_tokens":3,"temperature":0,"top_p":0.5,
    "stop":["\n\n","END"],"seed":-42,"presence_penalty":-1.5,"frequency_penalty":2,"user":"u-1",
    "messages":[{"role":"user","content":"a"}]})"), 3);
  EXPECT_EQ(r.max_tokens, 9);  // max_completion_tokens wins over the older max_tokens
  ASSERT_NE(r.sampling, nullptr);
  EXPECT_EQ(r.sampling->temperature, 0.0);
  EXPECT_EQ(r.sampling->top_p, 0.5);
  EXPECT_EQ(r.sampling->presence_penalty, -1.5);
  EXPECT_EQ(r.sampling->frequency_penalty, 2.0);
  EXPECT_EQ(r.sampling->seed, -42);
  EXPECT_EQ(r.sampling->stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_EQ(r.sampling->user, "u-1");
  const auto one = parse_chat_request(Json::parse(R"({"model":"m","stop":"x","messages":[{"role":"user","content":"a"}]})"), 3);
  ASSERT_NE(one.sampling, nullptr);
  EXPECT_EQ(one.sampling->stop, std::vector<std::string>{"x"});
  EXPECT_FALSE(one.sampling->temperature);
  // None set: the engine's defaults, nothing sent.
  EXPECT_EQ(parse_chat_request(Json::parse(R"({"model":"m","messages":[{"role":"user","content":"a"}]})"), 3).sampling, nullptr);
}

TEST(ChatRequest, UnsupportedFieldsAreRefusedByName) {
  const std::string user = R"({"role":"user","content":"a"})";
  for (const std::string field : {R"("logit_bias":{"50256":-100})", R"("audio":{"voice":"alloy","format":"wav"})",
                                  R"("prediction":{"type":"content","content":"x"})", R"("web_search_options":{})",
                                  R"("functions":[{"name":"f"}])", R"("function_call":"auto")", R"("modalities":["text","audio"])",
                                  R"("n":2)", R"("logprobs":true)", R"("top_logprobs":2)"}) {
    const auto e = error_of(R"({"model":"m",)" + field + R"(,"messages":[)" + user + "]}");
    EXPECT_EQ(e.status, 400) << field;
    EXPECT_EQ(e.code, "unsupported_value") << field;
    EXPECT_NE(field.find("\"" + e.param + "\""), std::string::npos) << field << " named " << e.param;
    EXPECT_NE(e.message.find(e.param), std::string::npos) << e.message;
  }
  // Their neutral values pass.
  EXPECT_EQ(error_of(R"({"model":"m","logit_bias":{},"modalities":["text"],"n":1,"messages":[)" + user + "]}").status, 0);
}

TEST(ChatRequest, SchemaErrorsNameTheField) {
  const std::string user = R"({"role":"user","content":"a"})";
  struct Case {
    std::string body, param, code;
  };
  const Case cases[] = {
      {R"({"messages":[)" + user + "]}", "model", "missing_required_parameter"},
      {R"({"model":"m"})", "messages", "missing_required_parameter"},
      {R"({"model":"m","messages":[]})", "messages", "invalid_type"},
      {R"({"model":"m","messages":{}})", "messages", "invalid_type"},
      {R"({"model":"m","messages":[)" + user + "," + user + "," + user + "," + user + "]}", "messages", "too_many_messages"},
      {R"({"model":"m","messages":[)" + user + R"(,"x"]})", "messages[1]", "invalid_type"},
      {R"({"model":"m","messages":[{"content":"a"}]})", "messages[0].role", "invalid_type"},
      {R"({"model":"m","messages":[{"role":"robot","content":"a"}]})", "messages[0].role", "invalid_value"},
      {R"({"model":"m","messages":[{"role":"user"}]})", "messages[0].content", "missing_required_parameter"},
      {R"({"model":"m","messages":[{"role":"user","content":7}]})", "messages[0].content", "invalid_type"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages[0].content[0].type", "unsupported_value"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"text"}]}]})", "messages[0].content[0].text", "invalid_type"},
      {R"({"model":"m","stream":"yes","messages":[)" + user + "]}", "stream", "invalid_type"},
      {R"({"model":"m","max_tokens":0,"messages":[)" + user + "]}", "max_tokens", "invalid_type"},
      {R"({"model":"m","max_completion_tokens":1.5,"messages":[)" + user + "]}", "max_completion_tokens", "invalid_type"},
      {R"({"model":"m","temperature":3,"messages":[)" + user + "]}", "temperature", "invalid_type"},
      {R"({"model":"m","top_p":1.5,"messages":[)" + user + "]}", "top_p", "invalid_type"},
      {R"({"model":"m","presence_penalty":-3,"messages":[)" + user + "]}", "presence_penalty", "invalid_type"},
      {R"({"model":"m","frequency_penalty":"0","messages":[)" + user + "]}", "frequency_penalty", "invalid_type"},
      {R"({"model":"m","seed":1.5,"messages":[)" + user + "]}", "seed", "invalid_type"},
      {R"({"model":"m","stop":["a","b","c","d","e"],"messages":[)" + user + "]}", "stop", "invalid_value"},
      {R"({"model":"m","stop":["a",7],"messages":[)" + user + "]}", "stop[1]", "invalid_type"},
      {R"({"model":"m","stop":"","messages":[)" + user + "]}", "stop", "invalid_value"},
      {R"({"model":"m","user":7,"messages":[)" + user + "]}", "user", "invalid_type"},
  };
  for (const auto& c : cases) {
    const auto e = error_of(c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_EQ(e.code, c.code) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
  }
}

// /v1/completions bodies: one prompt text, max_tokens 16 by default, the chat request's sampling;
// what would change the answer's make-up is refused by name.
overhead::serve::ApiError completion_error_of(const std::string& body) {
  try {
    (void)overhead::serve::parse_completion_request(Json::parse(body));
  } catch (const RequestError& e) {
    return e.error;
  }
  return {0, "", "", "", ""};
}

TEST(CompletionRequest, APromptTextPassesThroughWithOpenAIsDefaults) {
  const auto r = overhead::serve::parse_completion_request(Json::parse(R"({"model":"m","prompt":"Once upon","temperature":0,"stop":"\n"})"));
  ASSERT_TRUE(r.prompt_text);
  EXPECT_EQ(*r.prompt_text, "Once upon");
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_TRUE(r.messages.is_array() && r.messages.empty());
  ASSERT_NE(r.sampling, nullptr);
  EXPECT_EQ(r.sampling->stop, std::vector<std::string>{"\n"});
  const auto listed = overhead::serve::parse_completion_request(Json::parse(R"({"model":"m","prompt":["one"],"max_tokens":3})"));
  EXPECT_EQ(*listed.prompt_text, "one");
  EXPECT_EQ(listed.max_tokens, 3);
  // Their neutral values pass.
  EXPECT_EQ(completion_error_of(R"({"model":"m","prompt":"x","n":1,"best_of":1,"echo":false,"logprobs":0,"logit_bias":{}})").status, 0);
}

TEST(CompletionRequest, WhatChangesTheAnswerIsRefusedByName) {
  for (const std::string field : {R"("prompt":["a","b"])", R"("prompt":[1,2,3])", R"("prompt":[[1,2]])", R"("n":2)", R"("best_of":3)",
                                  R"("echo":true)", R"("logprobs":2)", R"("suffix":"end")", R"("logit_bias":{"1":5})"}) {
    const std::string body = field.starts_with("\"prompt\"") ? R"({"model":"m",)" + field + "}" : R"({"model":"m","prompt":"x",)" + field + "}";
    const auto e = completion_error_of(body);
    EXPECT_EQ(e.status, 400) << field;
    EXPECT_EQ(e.code, "unsupported_value") << field;
    EXPECT_NE(field.find("\"" + e.param + "\""), std::string::npos) << field << " named " << e.param;
  }
  EXPECT_EQ(completion_error_of(R"({"model":"m"})").code, "missing_required_parameter");
  EXPECT_EQ(completion_error_of(R"({"model":"m","prompt":""})").param, "prompt");
  EXPECT_EQ(completion_error_of(R"({"model":"m","prompt":7})").param, "prompt");
  EXPECT_EQ(completion_error_of(R"({"model":"m","prompt":"x","max_tokens":0})").param, "max_tokens");
}

}  // namespace
