// Structured outputs through the gateway (answer_constraint.hpp) with a scripted engine
// (tests/engine/scripted_openai_server.hpp) that answers a fixed text:
//   - the constraint reaches the engine in the dialect's spelling (vllm structured_outputs.json,
//     sglang json_schema as a string, llamacpp json_schema), and the record says which;
//   - tool_choice required and a named function become message.tool_calls with finish_reason
//     "tool_calls", whole and streamed alike (the calls sent whole at the end, none of the text as
//     content);
//   - response_format json_schema: a valid answer is the content; one that does not validate is a
//     502 invalid_structured_output naming the first error (streamed: an error event, no finish);
//   - dialect=openai cannot constrain: a 400 engine_refused, nothing answered unconstrained;
//   - a bad response_format or tool parameters is a 400 naming the field, nothing sent;
//   - chat_template_kwargs reach the worker's render.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "backends/open.hpp"
#include "chat_fixture.hpp"
#include "engine/scripted_openai_server.hpp"

namespace {

using ChatTest = overhead::serve::testing::ChatServeTest;
using overhead::testing::ScriptedOpenAiServer;
using nlohmann::json;

const std::string kModel = "llama-3.3-70b-instruct";
const std::string kTools =
    R"([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12}},"required":["city"]}}},)"
    R"({"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"zone":{"type":"string","enum":["CET","UTC"]}},"required":["zone"]}}}])";
const std::string kCitySchema =
    R"({"type":"json_schema","json_schema":{"name":"city","strict":true,"schema":{"type":"object","properties":{"city":{"type":"string"},"rank":{"type":"integer","maximum":9}},"required":["city","rank"],"additionalProperties":false}}})";

// The stream's events: the content, the calls (each delta a whole call), the finish reason, an error.
struct Folded {
  std::string content;
  json calls = json::array();
  std::string finish_reason;
  json error;
  bool done = false;
};

Folded fold(const std::string& body) {
  Folded f;
  for (std::size_t at = 0, end; (end = body.find("\n\n", at)) != std::string::npos; at = end + 2) {
    const std::string data = body.substr(at + 6, end - at - 6);
    if (data == "[DONE]") {
      f.done = true;
      continue;
    }
    const json j = json::parse(data);
    if (j.contains("error")) {
      f.error = j["error"];
      continue;
    }
    if (j["choices"].empty()) continue;
    const json& d = j["choices"][0]["delta"];
    if (d.contains("content") && d["content"].is_string()) f.content += d["content"].get<std::string>();
    if (d.contains("tool_calls"))
      for (const json& c : d["tool_calls"]) f.calls.push_back(json{{"id", c["id"]}, {"type", c["type"]}, {"function", c["function"]}});
    if (!j["choices"][0]["finish_reason"].is_null()) f.finish_reason = j["choices"][0]["finish_reason"];
  }
  return f;
}

class StructuredOutputTest : public ChatTest {
 protected:
  void start_with(const std::string& text, const std::string& dialect) {
    engine_.script = [text](const std::string&, std::chrono::microseconds&) {
      // Cut in two, so a stream's text comes in pieces.
      const std::size_t half = text.size() / 2;
      return std::vector<std::string>{ScriptedOpenAiServer::text_event(text.substr(0, half)),
                                      ScriptedOpenAiServer::text_event(text.substr(half)),
                                      ScriptedOpenAiServer::text_event("", "stop"), ScriptedOpenAiServer::usage_event(10, 8),
                                      ScriptedOpenAiServer::done_event()};
    };
    overhead::serve::ServerOptions o;
    o.models = {kModel};
    o.workers.worker.decoder =
        overhead::backends::open_decoder("openai:" + engine_.url() + (dialect.empty() ? "" : ",dialect=" + dialect + ",prompt=text"));
    start(o);
    client_->set_read_timeout(30, 0);
  }
  static std::string body(const std::string& extra) {
    return R"({"model":")" + kModel + R"(","messages":[{"role":"user","content":"Weather in Paris?"}],"tools":)" + kTools + extra + "}";
  }
  Folded stream(const std::string& request) {
    std::string streamed = request;
    streamed.insert(streamed.size() - 1, R"(,"stream":true)");
    auto r = client_->Post("/v1/chat/completions", streamed, "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    return fold(r->body);
  }
  // The record's constraint, read back through an asynchronous request.
  std::string record_constraint(const std::string& request) {
    const json queued = post("/v1/requests", request, 202);
    for (int i = 0; i < 200; ++i) {
      auto r = client_->Get("/v1/requests/" + queued["id"].get<std::string>());
      const json j = json::parse(r->body);
      if (j["status"] != "queued" && j["status"] != "in_progress" && j.contains("record")) return j["record"].value("constraint", "?");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "no record";
  }
  ScriptedOpenAiServer engine_;
};

TEST_F(StructuredOutputTest, TheSchemaReachesVllmAsStructuredOutputs) {
  start_with(R"({"city":"Paris","rank":1})", "vllm");
  const json answer = post("/v1/chat/completions", body(R"(,"response_format":)" + kCitySchema), 200);
  EXPECT_EQ(answer["choices"][0]["message"]["content"], R"({"city":"Paris","rank":1})");
  EXPECT_EQ(answer["choices"][0]["finish_reason"], "stop");
  const json sent = engine_.last_body();
  EXPECT_EQ(sent["structured_outputs"]["json"], json::parse(kCitySchema)["json_schema"]["schema"]) << sent.dump();
  EXPECT_EQ(record_constraint(body(R"(,"response_format":)" + kCitySchema)), "json_schema");
  EXPECT_EQ(record_constraint(body("")), "") << "no constraint, none recorded";
}

TEST_F(StructuredOutputTest, TheSchemaReachesSglangAsAString) {
  start_with(R"({"a":1})", "sglang");
  (void)post("/v1/chat/completions", body(R"(,"response_format":{"type":"json_object"})"), 200);
  const json sent = engine_.last_body();
  ASSERT_TRUE(sent["json_schema"].is_string()) << sent.dump();
  EXPECT_EQ(json::parse(sent["json_schema"].get<std::string>()), json({{"type", "object"}}));
}

TEST_F(StructuredOutputTest, ANamedFunctionBecomesOneCallWholeAndStreamed) {
  const std::string text = R"({"city": "Paris"})";
  start_with(text, "llamacpp");
  const std::string request = body(R"(,"tool_choice":{"type":"function","function":{"name":"get_weather"}})");
  const json answer = post("/v1/chat/completions", request, 200);
  const json& choice = answer["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null()) << "the constrained text is not content";
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << choice.dump();
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(choice["message"]["tool_calls"][0]["function"]["arguments"].get<std::string>()), json({{"city", "Paris"}}));
  // The engine got the tool's parameters as its schema, in llama.cpp's spelling.
  const json sent = engine_.last_body();
  EXPECT_EQ(sent["json_schema"]["properties"]["city"]["maxLength"], 12) << sent.dump();
  const Folded f = stream(request);
  EXPECT_TRUE(f.done);
  EXPECT_TRUE(f.error.is_null()) << f.error.dump();
  EXPECT_EQ(f.content, "");
  EXPECT_EQ(f.finish_reason, "tool_calls");
  ASSERT_EQ(f.calls.size(), 1u);
  EXPECT_EQ(f.calls[0]["function"], choice["message"]["tool_calls"][0]["function"]);
  EXPECT_EQ(record_constraint(request), "tool_named");
}

TEST_F(StructuredOutputTest, RequiredBecomesTheCallsWholeAndStreamed) {
  start_with(R"([{"name":"get_time","parameters":{"zone":"CET"}},{"name":"get_weather","parameters":{"city":"Oslo"}}])", "llamacpp");
  const std::string request = body(R"(,"tool_choice":"required")");
  const json answer = post("/v1/chat/completions", request, 200);
  const json& message = answer["choices"][0]["message"];
  EXPECT_EQ(answer["choices"][0]["finish_reason"], "tool_calls");
  ASSERT_EQ(message["tool_calls"].size(), 2u) << message.dump();
  EXPECT_EQ(message["tool_calls"][0]["function"]["name"], "get_time");
  EXPECT_EQ(message["tool_calls"][1]["function"]["arguments"], R"({"city":"Oslo"})");
  const std::string id = answer["id"];
  EXPECT_EQ(message["tool_calls"][1]["id"], "call_" + id + "_1");
  const json sent = engine_.last_body();
  EXPECT_EQ(sent["json_schema"]["type"], "array") << sent.dump();
  EXPECT_EQ(sent["json_schema"]["minItems"], 1);
  const Folded f = stream(request);
  EXPECT_EQ(f.finish_reason, "tool_calls");
  ASSERT_EQ(f.calls.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(f.calls[i]["function"], message["tool_calls"][i]["function"]);
  EXPECT_EQ(record_constraint(request), "tool_required");
}

TEST_F(StructuredOutputTest, AnAnswerThatDoesNotValidateIsAnErrorNeverPassedOn) {
  start_with(R"({"city":"Paris","rank":12})", "llamacpp");
  const std::string request = body(R"(,"response_format":)" + kCitySchema);
  const json e = post("/v1/chat/completions", request, 502);
  EXPECT_EQ(e["error"]["code"], "invalid_structured_output") << e.dump();
  EXPECT_NE(e["error"]["message"].get<std::string>().find("/rank"), std::string::npos) << e.dump();
  const Folded f = stream(request);
  EXPECT_EQ(f.error["code"], "invalid_structured_output") << "streamed: an error event at the end";
  EXPECT_EQ(f.finish_reason, "") << "no clean finish";
  EXPECT_FALSE(f.done);
  // A call whose arguments do not validate against its tool is no call either.
  const json bad_call = post("/v1/chat/completions", body(R"(,"tool_choice":{"type":"function","function":{"name":"get_time"}})"), 502);
  EXPECT_EQ(bad_call["error"]["code"], "invalid_structured_output") << bad_call.dump();
}

TEST_F(StructuredOutputTest, TheOpenAiDialectCannotConstrainAndSaysSo) {
  start_with(R"({"city":"Paris","rank":1})", "");
  const json e = post("/v1/chat/completions", body(R"(,"response_format":)" + kCitySchema), 400);
  EXPECT_EQ(e["error"]["code"], "engine_refused") << e.dump();
  EXPECT_NE(e["error"]["message"].get<std::string>().find("dialect=openai cannot constrain"), std::string::npos) << e.dump();
  EXPECT_EQ(engine_.hits.load(), 0) << "nothing sent unconstrained";
}

TEST_F(StructuredOutputTest, BadConstraintsAreA400NamingTheFieldBeforeAnythingIsQueued) {
  start_with("{}", "llamacpp");
  struct Case {
    std::string extra, param;
  };
  const Case cases[] = {
      {R"(,"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"$ref":"http://example.com/s"}}})",
       "response_format.json_schema.schema"},
      {R"(,"response_format":{"type":"json_schema","json_schema":{"schema":{}}})", "response_format.json_schema.name"},
      {R"(,"response_format":{"type":"json_object"},"tool_choice":"required")", "response_format"},
      {R"(,"chat_template_kwargs":{"tools":[]})", "chat_template_kwargs.tools"},
  };
  for (const auto& c : cases) {
    const json e = post("/v1/chat/completions", body(c.extra), 400);
    EXPECT_EQ(e["error"]["param"], c.param) << e.dump();
  }
  const std::string bad_tool =
      R"({"model":")" + kModel +
      R"(","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"string"}}}],"tool_choice":"required"})";
  const json e = post("/v1/chat/completions", bad_tool, 400);
  EXPECT_EQ(e["error"]["param"], "tools[0].function.parameters") << e.dump();
  // Under tool_choice auto too (nothing is constrained, and still the parameters must be a schema).
  for (const char* parameters : {R"({"type":"string"})", R"({"type":"object","properties":{"a":{"minimum":"x"}}})"}) {
    const std::string auto_tool = R"({"model":")" + kModel +
                                  R"(","messages":[{"role":"user","content":"a"}],"tools":[{"type":"function","function":{"name":"f","parameters":)" +
                                  parameters + "}}]}";
    const json a = post("/v1/chat/completions", auto_tool, 400);
    EXPECT_EQ(a["error"]["param"].get<std::string>().rfind("tools[0].function.parameters", 0), 0u) << a.dump();
  }
  EXPECT_EQ(engine_.hits.load(), 0) << "nothing reached the engine";
}

TEST_F(StructuredOutputTest, ChatTemplateKwargsReachTheRender) {
  start_with("fine", "llamacpp");
  // A kwarg the template does not read leaves the prompt as it was; the request is accepted and
  // carried (it was refused before the work item had a field for it).
  const json plain = post("/v1/chat/completions", body(""), 200);
  const json with = post("/v1/chat/completions", body(R"(,"chat_template_kwargs":{"enable_thinking":false})"), 200);
  EXPECT_EQ(with["usage"]["prompt_tokens"], plain["usage"]["prompt_tokens"]);
  EXPECT_EQ(with["choices"][0]["message"]["content"], "fine");
}

}  // namespace
