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
  };
  for (const auto& c : cases) {
    const auto e = error_of(c.body);
    EXPECT_EQ(e.status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body;
    EXPECT_EQ(e.code, c.code) << c.body;
    EXPECT_EQ(e.type, "invalid_request_error") << c.body;
  }
}

}  // namespace
