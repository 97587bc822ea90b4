// An engine's errors as the gateway's client sees them, through the in-process pipeline and the
// openai decoder in front of a scripted engine (tests/engine/scripted_openai_server.hpp):
//   - an error body cut inside a UTF-8 character, or holding invalid bytes, is still answered
//     (sync, stream and async), as valid JSON, within the request's time;
//   - an engine's 4xx that blames the request is the client's 400 with the engine's message, not
//     a 502 the SDKs retry, and the engine is asked once;
//   - the engine's credentials (the URL's password, the api_key_env key) reach the engine and
//     never the client, the dead-letter file or the decoder's description.
#include <httplib.h>
#include <stdlib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "chat_fixture.hpp"
#include "engine/scripted_openai_server.hpp"

namespace {

using ChatTest = overhead::serve::testing::ChatServeTest;
using overhead::testing::ScriptedOpenAiServer;
using nlohmann::json;
using namespace std::chrono_literals;

const std::string kRequest = R"({"model":"phi-4","messages":[{"role":"user","content":"a"}])";
const std::string kFffd = "\xEF\xBF\xBD";

class EngineErrorTest : public ChatTest {
 protected:
  void start_with(const std::string& decoder) {
    overhead::serve::ServerOptions o;
    o.workers.worker.decoder = overhead::backends::open_decoder(decoder);
    o.dead_letter_path = (dir_ / "dead_letters.jsonl").string();
    o.request_timeout = 5s;
    start(o);
    // An unanswered request fails here, after the gateway's own --request-timeout, not never.
    client_->set_read_timeout(20, 0);
  }
  // The error of an asynchronous request once it is no longer queued.
  json poll_failed() {
    auto r = client_->Post("/v1/requests", kRequest + "}", "application/json");
    EXPECT_TRUE(r);
    if (!r) return {};
    EXPECT_EQ(r->status, 202) << r->body;
    const std::string id = json::parse(r->body).at("id");
    json s;
    for (int i = 0; i < 2000; ++i) {
      auto g = client_->Get(("/v1/requests/" + id).c_str());
      EXPECT_TRUE(g);
      if (!g) return {};
      EXPECT_EQ(g->status, 200) << g->body;
      if (g->status != 200) return {};
      s = json::parse(g->body);
      if (s["status"] != "queued") break;
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_EQ(s["status"], "failed") << s.dump();
    return s["error"];
  }
  std::string dead_letters() {
    std::ifstream in(dir_ / "dead_letters.jsonl");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
};

// An engine (or a proxy in front of it) whose error body the decoder cuts inside a character, or
// that sends bytes that are no UTF-8: the refusal is answered, with the text made valid (the
// gateway used to throw writing it, and left the request unanswered for ever).
TEST_F(EngineErrorTest, AnErrorBodyThatIsNoValidUtf8IsStillAnswered) {
  struct Case {
    std::string body;
    std::string want;  // in the message
  };
  const Case cases[] = {
      {std::string(299, 'x') + "\xC3\xA9 and more", std::string(299, 'x')},  // cut after é's first byte
      {"bad \xFF\xFE bytes", "bad " + kFffd + kFffd + " bytes"},
  };
  for (const auto& c : cases) {
    ScriptedOpenAiServer engine;
    engine.status = 400;
    engine.body = c.body;
    start_with("openai:" + engine.url());
    for (const bool stream : {false, true}) {
      auto r = client_->Post("/v1/chat/completions", kRequest + (stream ? R"(,"stream":true})" : "}"), "application/json");
      ASSERT_TRUE(r) << "no answer (stream " << stream << ")";
      EXPECT_EQ(r->status, 400) << r->body;
      const json e = json::parse(r->body, nullptr, false);
      ASSERT_TRUE(e.is_object()) << r->body;
      const std::string message = e["error"]["message"];
      EXPECT_NE(message.find(c.want), std::string::npos) << message;
      EXPECT_EQ(message.find(c.want + "\xC3"), std::string::npos) << "half a character";
    }
    const json e = poll_failed();
    EXPECT_NE(e["message"].get<std::string>().find(c.want), std::string::npos) << e.dump();
    stop();
    server_.reset();
  }
}

// vLLM's answer to a prompt over the model's context length: the client's error (400, with the
// engine's message), not a 502 decode_failed that the OpenAI SDKs retry; asked once.
TEST_F(EngineErrorTest, AnEnginesRefusalIsTheClientsError) {
  ScriptedOpenAiServer engine;
  engine.status = 400;
  engine.body = R"({"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 4097 tokens.","type":"BadRequestError","param":null,"code":400})";
  start_with("openai:" + engine.url());
  const json e = post("/v1/chat/completions", kRequest + "}", 400);
  EXPECT_EQ(e["error"]["code"], "engine_refused");
  EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  const std::string message = e["error"]["message"];
  EXPECT_NE(message.find("HTTP 400: This model's maximum context length is 2048 tokens"), std::string::npos) << message;
  EXPECT_EQ(engine.hits.load(), 1) << "a refusal is not retried";
  EXPECT_NE(dead_letters().find("\"engine_refused\""), std::string::npos) << dead_letters();
  // A stream refused before its first token: the same 400.
  auto r = client_->Post("/v1/chat/completions", kRequest + R"(,"stream":true})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  // The engine's own trouble (here, its credentials refused) stays a 502 for the operator.
  engine.status = 401;
  engine.body = R"({"error":{"message":"invalid api key"}})";
  const json bad = post("/v1/chat/completions", kRequest + "}", 502);
  EXPECT_EQ(bad["error"]["code"], "decode_failed");
}

// An engine behind basic auth (the URL's user info) and a key (api_key_env): both reach the engine;
// neither the password nor the key reaches the client, the dead-letter file or the description.
TEST_F(EngineErrorTest, AnEnginesCredentialsReachItAndNoOneElse) {
  ScriptedOpenAiServer engine;
  engine.writes = {"data: <html>\n\n"};  // no OpenAI stream: a permanent decode_failed naming the URL
  ::setenv("OVERHEAD_TEST_ENGINE_KEY", "sk-test-4f9e2a", 1);
  const std::string url = "http://user:pa55word@" + engine.url().substr(std::string("http://").size());
  const std::string spec = "openai:" + url + ",api_key_env=OVERHEAD_TEST_ENGINE_KEY";
  const auto decoder = overhead::backends::open_decoder(spec);
  const std::string described = decoder->describe();
  EXPECT_EQ(described.find("pa55word"), std::string::npos) << described;
  EXPECT_EQ(described.find("sk-test-4f9e2a"), std::string::npos) << described;
  EXPECT_NE(described.find("user:***@"), std::string::npos) << described;
  EXPECT_NE(described.find("api_key_env=OVERHEAD_TEST_ENGINE_KEY"), std::string::npos) << described;
  start_with(spec);
  const json e = post("/v1/chat/completions", kRequest + "}", 502);
  const std::string message = e["error"]["message"];
  EXPECT_NE(message.find("not an OpenAI stream"), std::string::npos) << message;
  EXPECT_EQ(message.find("pa55word"), std::string::npos) << message;
  EXPECT_NE(message.find("user:***@"), std::string::npos) << message;
  const std::string letters = dead_letters();
  EXPECT_NE(letters.find("decode_failed"), std::string::npos) << letters;
  EXPECT_EQ(letters.find("pa55word"), std::string::npos) << letters;
  EXPECT_EQ(letters.find("sk-test-4f9e2a"), std::string::npos) << letters;
  const std::string head = engine.last_head();
  EXPECT_NE(head.find("Authorization: Bearer sk-test-4f9e2a"), std::string::npos) << head;
  // A variable that is not set is an error naming it (and no key is invented).
  ::unsetenv("OVERHEAD_TEST_ENGINE_KEY");
  try {
    (void)overhead::backends::open_decoder(spec);
    ADD_FAILURE() << "an unset api_key_env was taken";
  } catch (const std::invalid_argument& x) {
    EXPECT_NE(std::string(x.what()).find("OVERHEAD_TEST_ENGINE_KEY is not set"), std::string::npos) << x.what();
    EXPECT_EQ(std::string(x.what()).find("pa55word"), std::string::npos) << x.what();
  }
}

}  // namespace
