// Tool calls and reasoning through the gateway (answer_shape.hpp, src/agent): a scripted engine
// (tests/engine/scripted_openai_server.hpp) answers a model's text, and the client gets OpenAI's
// message.tool_calls, message.reasoning_content and finish_reason "tool_calls":
//   - Llama 3.3 (its template detects llama3_json): text before the calls stays content, two calls;
//   - a hermes answer with a <think> block, the parsers forced (--tool-parser hermes
//     --reasoning-parser think);
//   - streamed, the deltas folded give the non-streamed answer, with the engine's text cut at
//     every position and at pairs of positions (each request's `user` field tells the scripted
//     engine where to cut its writes);
//   - tool_choice none keeps the text as content; parallel_tool_calls false keeps the first call;
//   - bad tool_choice values are a 400 naming the field, with nothing sent to the engine;
//   - a stream interrupted (its worker died mid-call and the item was generated again) ends with
//     stream_interrupted and shows nothing of the call it held back.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "backends/queue_siblings.hpp"
#include "chat_fixture.hpp"
#include "engine/scripted_openai_server.hpp"
#include "ports/store.hpp"
#include "reply/reply_codec.hpp"
#include "tok/tokenizer.hpp"

namespace {

using ChatTest = overhead::serve::testing::ChatServeTest;
using overhead::testing::ScriptedOpenAiServer;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string kTools =
    R"([{"type":"function","function":{"name":"get_weather","description":"The weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},)"
    R"({"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"zone":{"type":"string"}}}}}])";

const std::string kLlamaText =
    "Let me check the caf\xC3\xA9 first.<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; "
    "{\"name\": \"get_time\", \"parameters\": {\"zone\": \"CET\"}}";
const std::string kHermesText =
    "<think>\nThe user wants the weather and the time.\n</think>\n\nI will look both up.\n<tool_call>\n{\"name\": \"get_weather\", "
    "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}\n</tool_call>";

// The engine's answer to a request: `text` written as text_completion events, cut where the
// request's `user` field says ("cut:3,17": pieces [0,3) [3,17) [17,end); no user: one piece).
// A cut inside a UTF-8 character moves to its end: an engine's JSON strings hold whole characters.
std::vector<std::string> engine_writes(const std::string& text, const std::string& request_body) {
  std::vector<std::size_t> cuts;
  const json body = json::parse(request_body, nullptr, false);
  if (body.is_object() && body.contains("user")) {
    const std::string user = body["user"];
    std::size_t at = user.find(':');
    while (at != std::string::npos) {
      const std::size_t next = user.find(',', at + 1);
      cuts.push_back(std::stoul(user.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1)));
      at = next;
    }
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t c : cuts) {
    while (c < text.size() && (static_cast<unsigned char>(text[c]) & 0xC0) == 0x80) ++c;
    if (c <= from || c >= text.size()) continue;
    out.push_back(ScriptedOpenAiServer::text_event(text.substr(from, c - from)));
    from = c;
  }
  out.push_back(ScriptedOpenAiServer::text_event(text.substr(from)));
  out.push_back(ScriptedOpenAiServer::text_event("", "stop"));
  out.push_back(ScriptedOpenAiServer::usage_event(10, 20));
  out.push_back(ScriptedOpenAiServer::done_event());
  return out;
}

// A stream's events folded into the message they stand for, as a client's SDK folds them.
struct Folded {
  json message = json{{"content", ""}, {"reasoning_content", ""}, {"tool_calls", json::array()}};
  std::string finish_reason;
  std::string id;
  bool done = false;
  json error;  // an error event
};

Folded fold(const std::string& body) {
  Folded f;
  std::size_t at = 0;
  while (true) {
    const std::size_t end = body.find("\n\n", at);
    if (end == std::string::npos) break;
    const std::string event = body.substr(at, end - at);
    at = end + 2;
    if (event.rfind("data: ", 0) != 0) continue;
    const std::string data = event.substr(6);
    if (data == "[DONE]") {
      f.done = true;
      continue;
    }
    const json j = json::parse(data);
    if (j.contains("error")) {
      f.error = j["error"];
      continue;
    }
    f.id = j["id"];
    if (j["choices"].empty()) continue;
    const json& choice = j["choices"][0];
    const json& d = choice["delta"];
    if (d.contains("content") && d["content"].is_string()) f.message["content"] = f.message["content"].get<std::string>() + d["content"].get<std::string>();
    if (d.contains("reasoning_content"))
      f.message["reasoning_content"] = f.message["reasoning_content"].get<std::string>() + d["reasoning_content"].get<std::string>();
    if (d.contains("tool_calls")) {
      for (const json& c : d["tool_calls"]) {
        const std::size_t index = c["index"];
        json& calls = f.message["tool_calls"];
        if (c.contains("id")) {
          EXPECT_EQ(index, calls.size()) << "a call's first delta opens the next index";
          EXPECT_EQ(c["type"], "function");
          calls.push_back(json{{"id", c["id"]}, {"type", "function"}, {"function", {{"name", c["function"]["name"]}, {"arguments", ""}}}});
        }
        EXPECT_LT(index, calls.size()) << "arguments for a call not opened";
        if (index >= calls.size()) continue;
        json& fn = calls[index]["function"];
        fn["arguments"] = fn["arguments"].get<std::string>() + c["function"]["arguments"].get<std::string>();
      }
    }
    if (!choice["finish_reason"].is_null()) f.finish_reason = choice["finish_reason"];
  }
  return f;
}

// A non-streamed message in the folded form: null content as "", absent fields empty.
json normalised(const json& message) {
  json m{{"content", message["content"].is_null() ? json("") : message["content"]},
         {"reasoning_content", message.value("reasoning_content", std::string())},
         {"tool_calls", message.value("tool_calls", json::array())}};
  return m;
}

// The calls' ids are "call_" + the request's id + "_" + index; made index-only, so that the
// answers of two requests compare.
json without_ids(json m, const std::string& request_id) {
  for (std::size_t i = 0; i < m["tool_calls"].size(); ++i) {
    EXPECT_EQ(m["tool_calls"][i]["id"], "call_" + request_id + "_" + std::to_string(i));
    m["tool_calls"][i]["id"] = i;
  }
  return m;
}

class ToolCallTest : public ChatTest {
 protected:
  void start_with(const std::string& text, const std::vector<std::string>& models, overhead::serve::ParserOverrides parsers = {}) {
    engine_.script = [text](const std::string& body, std::chrono::microseconds&) { return engine_writes(text, body); };
    overhead::serve::ServerOptions o;
    o.models = models;
    o.workers.worker.decoder = overhead::backends::open_decoder("openai:" + engine_.url());
    o.parsers = std::move(parsers);
    start(o);
    client_->set_read_timeout(30, 0);
  }
  // The records stored so far (the server stopped first, so everything published is stored).
  std::vector<overhead::ports::Record> stored() {
    stop();
    std::vector<overhead::ports::Record> rows;
    overhead::backends::open_store(store_url_)->scan("serve", [&](const overhead::ports::Record& r) { rows.push_back(r); });
    return rows;
  }
  std::string body(const std::string& model, const std::string& extra = "") const {
    return R"({"model":")" + model + R"(","messages":[{"role":"user","content":"Weather and time in Paris?"}],"tools":)" + kTools + extra;
  }
  Folded stream(const std::string& request) {
    auto r = client_->Post("/v1/chat/completions", request + R"(,"stream":true})", "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << r->body;
    return fold(r->body);
  }
  // The non-streamed answer, then streams of the same text cut at every position and at pairs of
  // positions: each folds to the same message and finish reason.
  void expect_streams_equal_whole(const std::string& model, const std::string& text, const json& want) {
    const json whole = post("/v1/chat/completions", body(model) + "}", 200);
    const json& choice = whole["choices"][0];
    const json message = without_ids(normalised(choice["message"]), whole["id"]);
    EXPECT_EQ(message, want) << choice.dump();
    const std::string reason = choice["finish_reason"];
    std::vector<std::string> cuts;
    for (std::size_t i = 1; i < text.size(); ++i) cuts.push_back(std::to_string(i));
    for (std::size_t i = 1; i < text.size(); i += 7) cuts.push_back(std::to_string(i) + "," + std::to_string((i * 13) % text.size()));
    std::string every = "0";
    for (std::size_t i = 1; i < text.size(); ++i) every += "," + std::to_string(i);
    cuts.push_back(every);  // one byte per write
    for (const auto& cut : cuts) {
      const Folded f = stream(body(model, R"(,"user":"cut:)" + cut + "\""));
      EXPECT_TRUE(f.done) << cut;
      EXPECT_TRUE(f.error.is_null()) << f.error.dump();
      EXPECT_EQ(without_ids(f.message, f.id), message) << "cut at " << cut;
      EXPECT_EQ(f.finish_reason, reason) << "cut at " << cut;
      if (::testing::Test::HasFailure()) return;  // one cut's story is enough
    }
    EXPECT_EQ(engine_.last_body().value("user", ""), "cut:" + every) << "the cuts reach the engine";
  }
  ScriptedOpenAiServer engine_;
};

json call(std::size_t index, const std::string& name, const std::string& arguments) {
  return json{{"id", index}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}};
}

TEST_F(ToolCallTest, Llama33CallsComeBackAsToolCallsWholeAndStreamedAlike) {
  start_with(kLlamaText, {"llama-3.3-70b-instruct"});
  const json want{{"content", "Let me check the caf\xC3\xA9 first."},
                  {"reasoning_content", ""},
                  {"tool_calls", {call(0, "get_weather", R"({"city":"Paris"})"), call(1, "get_time", R"({"zone":"CET"})")}}};
  const json whole = post("/v1/chat/completions", body("llama-3.3-70b-instruct") + "}", 200);
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "tool_calls");
  EXPECT_FALSE(whole["choices"][0]["message"].contains("reasoning_content")) << "no reasoning parser for this template";
  expect_streams_equal_whole("llama-3.3-70b-instruct", kLlamaText, want);
  // The records count the calls as the gateway read them (no reasoning in this template's answers).
  const auto rows = stored();
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_EQ(r.tool_calls, 2) << r.id;
    EXPECT_EQ(r.reasoning_tokens, 0) << r.id;
  }
}

TEST_F(ToolCallTest, HermesCallsAndThinkReasoningWithTheParsersForced) {
  start_with(kHermesText, {"phi-4"}, {"hermes", "think"});
  const json want{{"content", "I will look both up."},
                  {"reasoning_content", "The user wants the weather and the time."},
                  {"tool_calls", {call(0, "get_weather", R"({"city":"Paris"})"), call(1, "get_time", R"({"zone":"CET"})")}}};
  expect_streams_equal_whole("phi-4", kHermesText, want);
  // The forced parsers reach the records too: two calls, and the reasoning counted with phi-4's tokenizer.
  const auto reasoning_tokens =
      static_cast<std::int64_t>(overhead::tok::Tokenizer::load("phi-4")->count("The user wants the weather and the time.", false));
  const auto rows = stored();
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    EXPECT_EQ(r.tool_calls, 2) << r.id;
    EXPECT_EQ(r.reasoning_tokens, reasoning_tokens) << r.id;
  }
}

// Content null when the answer is only calls, as OpenAI has it.
TEST_F(ToolCallTest, AnAnswerOfCallsOnlyHasNullContent) {
  const std::string text = "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {\"zone\": \"CET\"}}";
  start_with(text, {"llama-3.3-70b-instruct"});
  const json whole = post("/v1/chat/completions", body("llama-3.3-70b-instruct") + "}", 200);
  const json& m = whole["choices"][0]["message"];
  EXPECT_TRUE(m["content"].is_null()) << m.dump();
  ASSERT_EQ(m["tool_calls"].size(), 1u) << m.dump();
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], R"({"zone":"CET"})");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "tool_calls");
}

TEST_F(ToolCallTest, ToolChoiceNoneKeepsTheTextAsContentAndParallelFalseKeepsTheFirstCall) {
  start_with(kLlamaText, {"llama-3.3-70b-instruct"});
  const json none = post("/v1/chat/completions", body("llama-3.3-70b-instruct", R"(,"tool_choice":"none"})"), 200);
  EXPECT_EQ(none["choices"][0]["message"]["content"], kLlamaText);
  EXPECT_FALSE(none["choices"][0]["message"].contains("tool_calls"));
  EXPECT_EQ(none["choices"][0]["finish_reason"], "stop");
  const Folded streamed = stream(body("llama-3.3-70b-instruct", R"(,"tool_choice":"none","user":"cut:5,30,31")"));
  EXPECT_EQ(streamed.message["content"], kLlamaText);
  EXPECT_TRUE(streamed.message["tool_calls"].empty());

  // Without tools nothing is read as a call either.
  const json no_tools = post("/v1/chat/completions", R"({"model":"llama-3.3-70b-instruct","messages":[{"role":"user","content":"a"}]})", 200);
  EXPECT_EQ(no_tools["choices"][0]["message"]["content"], kLlamaText);

  const json automatic = post("/v1/chat/completions", body("llama-3.3-70b-instruct", R"(,"tool_choice":"auto"})"), 200);
  EXPECT_EQ(automatic["choices"][0]["message"]["tool_calls"].size(), 2u);
  // required and a named function constrain the engine (structured_outputs_test.cpp), which the
  // default dialect cannot: a 400 saying so, never the text read as auto.
  for (const std::string choice : {R"("required")", R"({"type":"function","function":{"name":"get_time"}})"}) {
    const json r = post("/v1/chat/completions", body("llama-3.3-70b-instruct", R"(,"tool_choice":)" + choice + "}"), 400);
    EXPECT_EQ(r["error"]["code"], "engine_refused") << choice;
  }

  const json first = post("/v1/chat/completions", body("llama-3.3-70b-instruct", R"(,"parallel_tool_calls":false})"), 200);
  ASSERT_EQ(first["choices"][0]["message"]["tool_calls"].size(), 1u) << first.dump();
  EXPECT_EQ(first["choices"][0]["message"]["tool_calls"][0]["function"]["name"], "get_weather");
  const Folded first_streamed = stream(body("llama-3.3-70b-instruct", R"(,"parallel_tool_calls":false,"user":"cut:40,90")"));
  EXPECT_EQ(without_ids(first_streamed.message, first_streamed.id),
            without_ids(normalised(first["choices"][0]["message"]), first["id"]));
}

// Without tools, reasoning is still read (the reasoning parser does not depend on tool_choice) and
// a call's markers are text; with include_usage the usage chunk follows the finish chunk.
TEST_F(ToolCallTest, ReasoningIsReadWithoutToolsAndCallMarkersAreThenText) {
  start_with(kHermesText, {"phi-4"}, {"hermes", "think"});
  const std::string request = R"({"model":"phi-4","messages":[{"role":"user","content":"a"}])";
  const json whole = post("/v1/chat/completions", request + "}", 200);
  const json& m = whole["choices"][0]["message"];
  EXPECT_EQ(m["reasoning_content"], "The user wants the weather and the time.");
  EXPECT_EQ(m["content"], kHermesText.substr(kHermesText.find("I will")));
  EXPECT_FALSE(m.contains("tool_calls"));
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "stop");
  auto r = client_->Post("/v1/chat/completions", request + R"(,"user":"cut:3,9,50","stream":true,"stream_options":{"include_usage":true}})",
                         "application/json");
  ASSERT_TRUE(r);
  const Folded f = fold(r->body);
  EXPECT_EQ(f.message, normalised(m));
  EXPECT_TRUE(f.done);
  EXPECT_NE(r->body.find(R"("usage":{"prompt_tokens")"), std::string::npos) << r->body;
}

// The body's checks alone: tool_choice's default follows `tools`, a named function is kept.
TEST(ToolChoice, ParsedFromTheBody) {
  using overhead::serve::ToolChoice;
  const auto parse = [](const std::string& extra) {
    return overhead::serve::parse_chat_request(
        nlohmann::ordered_json::parse(R"({"model":"m","messages":[{"role":"user","content":"a"}])" + extra), 8);
  };
  EXPECT_EQ(parse("}").tool_choice, ToolChoice::none);
  EXPECT_EQ(parse(R"(,"tool_choice":"auto"})").tool_choice, ToolChoice::none) << "auto without tools reads no calls";
  EXPECT_EQ(parse(R"(,"tools":)" + kTools + "}").tool_choice, ToolChoice::automatic);
  EXPECT_EQ(parse(R"(,"tools":)" + kTools + R"(,"tool_choice":"none"})").tool_choice, ToolChoice::none);
  EXPECT_EQ(parse(R"(,"tools":)" + kTools + R"(,"tool_choice":"required"})").tool_choice, ToolChoice::required);
  const auto named = parse(R"(,"tools":)" + kTools + R"(,"tool_choice":{"type":"function","function":{"name":"get_time"}}})");
  EXPECT_EQ(named.tool_choice, ToolChoice::named);
  EXPECT_EQ(named.tool_choice_name, "get_time");
  EXPECT_TRUE(parse("}").parallel_tool_calls);
  EXPECT_FALSE(parse(R"(,"parallel_tool_calls":false})").parallel_tool_calls);
  EXPECT_NO_THROW(parse(R"(,"chat_template_kwargs":{}})")) << "nothing to pass on";
}

TEST_F(ToolCallTest, BadToolChoicesAreA400NamingTheFieldBeforeAnythingIsQueued) {
  start_with(kLlamaText, {"llama-3.3-70b-instruct"});
  struct Case {
    std::string extra;
    std::string param;
  };
  const Case cases[] = {
      {R"(,"tool_choice":"sometimes"})", "tool_choice"},
      {R"(,"tool_choice":42})", "tool_choice"},
      {R"(,"tool_choice":{"type":"function","function":{"name":"get_stock"}}})", "tool_choice.function.name"},
      {R"(,"tool_choice":{"type":"retrieval"}})", "tool_choice.type"},
      {R"(,"parallel_tool_calls":"yes"})", "parallel_tool_calls"},
      {R"(,"chat_template_kwargs":{"messages":[]}})", "chat_template_kwargs.messages"},
      {R"(,"chat_template_kwargs":[true]})", "chat_template_kwargs"},
  };
  for (const auto& c : cases) {
    for (const bool streamed : {false, true}) {
      std::string request = body("llama-3.3-70b-instruct", c.extra);
      if (streamed) request.insert(request.size() - 1, R"(,"stream":true)");
      const json e = post("/v1/chat/completions", request, 400);
      EXPECT_EQ(e["error"]["param"], c.param) << e.dump();
      EXPECT_NE(e["error"]["message"].get<std::string>().find(c.param), std::string::npos) << e.dump();
    }
  }
  const json e = post("/v1/chat/completions",
                      R"({"model":"llama-3.3-70b-instruct","messages":[{"role":"user","content":"a"}],"tool_choice":"required"})", 400);
  EXPECT_EQ(e["error"]["param"], "tool_choice") << "required without tools";
  EXPECT_EQ(engine_.hits.load(), 0) << "nothing reached the engine";
}

// A routing-only gateway over a shared queue, and the test as its worker: text then half a call
// under one attempt, then another attempt (the first worker died and the item came back). The
// stream ends with stream_interrupted; the held-back call never shows, neither as a call nor as text.
TEST_F(ToolCallTest, AnInterruptedStreamShowsNothingOfAHeldBackCall) {
  namespace backends = overhead::backends;
  const std::string input = "mem:tools-in";
  const std::string reply_name = backends::reply_queue_name(input, "gw");
  overhead::serve::ServerOptions o;
  o.workers.threads = 0;
  o.models = {"phi-4"};
  o.parsers = {"hermes", "think"};
  o.pipeline.input = backends::open_queue(input);
  o.pipeline.log = backends::open_queue("mem:tools-log");
  o.pipeline.replies = backends::open_queue(backends::sibling_queue_url(input, reply_name));
  o.pipeline.reply_name = reply_name;
  o.pipeline.family = backends::open_queue_family(input);
  launch(o);

  std::thread worker([&] {
    const auto in = backends::open_queue(input);
    const auto replies = backends::open_queue(backends::sibling_queue_url(input, reply_name));
    std::vector<overhead::ports::Message> got;
    for (int i = 0; i < 200 && got.empty(); ++i) got = in->receive(1, 50ms);
    ASSERT_EQ(got.size(), 1u);
    const std::string id = json::parse(got[0].body)["id"];
    const std::string first = "Looking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa";
    std::string body;
    overhead::reply::append_delta(body, id, "w-1", 0, first);
    ASSERT_TRUE(replies->send_batch(std::vector<std::string>{body})[0].ok());
    std::this_thread::sleep_for(200ms);
    body.clear();
    overhead::reply::append_delta(body, id, "w-2", 0, "Other text");
    ASSERT_TRUE(replies->send_batch(std::vector<std::string>{body})[0].ok());
  });
  const Folded f = stream(body("phi-4"));
  worker.join();
  EXPECT_EQ(f.error.value("code", ""), "stream_interrupted") << f.error.dump();
  EXPECT_FALSE(f.done);
  EXPECT_EQ(f.message["content"], "Looking.");
  EXPECT_TRUE(f.message["tool_calls"].empty()) << f.message.dump();
  EXPECT_TRUE(f.finish_reason.empty());
}

}  // namespace
