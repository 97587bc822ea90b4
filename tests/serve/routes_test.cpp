// Drives `serve::Server` over loopback HTTP: tokenize/detokenize/render/models/health answers, the
// OpenAI error bodies naming the field, the body limit, bearer auth (the scheme in any case), 415
// for a body that is not JSON and 405 for a wrong method.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serve/server.hpp"
#include "serve_fixture.hpp"
#include "tok/tokenizer.hpp"

namespace {

using overhead::serve::Server;
using overhead::serve::ServerOptions;
using nlohmann::json;

using RoutesTest = overhead::serve::testing::ServeTest;

TEST_F(RoutesTest, TokenizeMatchesTheTokenizerOnTheRenderedPrompt) {
  start({});
  const std::string msgs = R"([{"role":"user","content":"What is 2+2?"}])";
  const json rendered = post("/v1/render", R"({"model":"phi-4","add_generation_prompt":true,"messages":)" + msgs + "}", 200);
  const std::string prompt = rendered.at("prompt");
  EXPECT_NE(prompt.find("What is 2+2?"), std::string::npos);
  const json t = post("/v1/tokenize", R"({"model":"microsoft/phi-4","add_generation_prompt":true,"messages":)" + msgs + "}", 200);
  const auto tokenizer = overhead::tok::Tokenizer::load("phi-4");
  const auto ids = tokenizer->encode(prompt);
  EXPECT_EQ(t.at("count").get<std::size_t>(), ids.size());
  EXPECT_EQ(t.at("tokens").get<std::vector<std::uint32_t>>(), ids);
  const json d = post("/v1/detokenize", json{{"model", "phi-4"}, {"tokens", ids}}.dump(), 200);
  EXPECT_EQ(d.at("prompt").get<std::string>(), tokenizer->decode(ids));
}

TEST_F(RoutesTest, ErrorsNameTheField) {
  start({});
  EXPECT_EQ(post("/v1/tokenize", "{not json", 400)["error"]["code"], "invalid_json");
  EXPECT_EQ(post("/v1/tokenize", R"({"prompt":"a"})", 400)["error"]["param"], "model");
  EXPECT_EQ(post("/v1/tokenize", R"({"model":"nope","prompt":"a"})", 404)["error"]["param"], "model");
  EXPECT_EQ(post("/v1/render", R"({"model":"phi-4"})", 400)["error"]["param"], "messages");
  EXPECT_EQ(post("/v1/render", R"({"model":"phi-4","messages":[{"content":"x"}]})", 400)["error"]["param"], "messages[0].role");
  const std::string five = R"([{"role":"user","content":"a"},{"role":"user","content":"a"},{"role":"user","content":"a"},{"role":"user","content":"a"},{"role":"user","content":"a"}])";
  EXPECT_EQ(post("/v1/render", R"({"model":"phi-4","messages":)" + five + "}", 400)["error"]["code"], "too_many_messages");
  // Gemma-2's template raises on a system message.
  const json g = post("/v1/render", R"({"model":"gemma-2-27b-it","messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]})", 400);
  EXPECT_EQ(g["error"]["code"], "template_error");
  EXPECT_EQ(post("/v1/detokenize", R"({"model":"phi-4","tokens":[1,-2]})", 400)["error"]["param"], "tokens[1]");
  const json big = post("/v1/tokenize", json{{"model", "phi-4"}, {"prompt", std::string(5000, 'a')}}.dump(), 413);
  EXPECT_EQ(big["error"]["code"], "request_too_large");
}

TEST_F(RoutesTest, ModelsAndHealth) {
  start({});
  auto m = client_->Get("/v1/models");
  ASSERT_TRUE(m);
  const json j = json::parse(m->body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"].size(), 3u);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  EXPECT_EQ(client_->Get("/readyz")->status, 200);
}

TEST_F(RoutesTest, BearerAuth) {
  ServerOptions o;
  o.auth_token = "s3cret-token";
  start(o);
  EXPECT_EQ(post("/v1/tokenize", R"({"model":"phi-4","prompt":"a"})", 401)["error"]["code"], "invalid_api_key");
  client_->set_bearer_token_auth("s3cret-tokem");
  EXPECT_EQ(client_->Post("/v1/tokenize", R"({"model":"phi-4","prompt":"a"})", "application/json")->status, 401);
  client_->set_bearer_token_auth("s3cret-token");
  EXPECT_EQ(client_->Post("/v1/tokenize", R"({"model":"phi-4","prompt":"a"})", "application/json")->status, 200);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
}

TEST_F(RoutesTest, TheBearerSchemeIsCaseInsensitive) {
  ServerOptions o;
  o.auth_token = "s3cret-token";
  start(o);
  const auto with = [&](const std::string& authorization) {
    auto r = client_->Post("/v1/tokenize", httplib::Headers{{"Authorization", authorization}}, R"({"model":"phi-4","prompt":"a"})",
                           "application/json");
    return r ? r->status : -1;
  };
  // RFC 7235 2.1: the scheme is a case-insensitive token, then one or more spaces.
  for (const char* scheme : {"Bearer", "bearer", "BEARER", "bEaReR"}) EXPECT_EQ(with(std::string(scheme) + " s3cret-token"), 200) << scheme;
  EXPECT_EQ(with("Bearer   s3cret-token"), 200);
  EXPECT_EQ(with("bearer S3CRET-TOKEN"), 401);  // the token itself is exact
  EXPECT_EQ(with("Bearers3cret-token"), 401);
  EXPECT_EQ(with("Basic s3cret-token"), 401);
  EXPECT_EQ(with("Bearer"), 401);
  EXPECT_EQ(with("Bearer "), 401);
}

TEST_F(RoutesTest, ABodyThatIsNotJsonIs415) {
  start({});
  const std::string body = R"({"model":"phi-4","prompt":"a"})";
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx"}) {
    auto r = client_->Post("/v1/tokenize", body, type);
    ASSERT_TRUE(r) << type;
    EXPECT_EQ(r->status, 415) << type;
    const json e = json::parse(r->body);
    EXPECT_EQ(e["error"]["code"], "unsupported_media_type") << type;
    EXPECT_EQ(e["error"]["type"], "invalid_request_error");
  }
  // No Content-Type at all (what a page's fetch() of a Blob sends) is refused too.
  httplib::Request bare;
  bare.method = "POST";
  bare.path = "/v1/tokenize";
  bare.body = body;
  auto none = client_->send(bare);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 415);
  // JSON with parameters or in another case is JSON.
  for (const char* type : {"application/json; charset=utf-8", "Application/JSON", "application/json ;charset=UTF-8"})
    EXPECT_EQ(client_->Post("/v1/tokenize", body, type)->status, 200) << type;
}

TEST_F(RoutesTest, AWrongMethodIs405WithAllow) {
  ServerOptions o;
  o.auth_token = "s3cret-token";
  start(o);
  // Auth comes before routing: without the token a wrong method is still a 401.
  EXPECT_EQ(client_->Get("/v1/tokenize")->status, 401);
  client_->set_bearer_token_auth("s3cret-token");
  auto get = client_->Get("/v1/tokenize");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  EXPECT_EQ(json::parse(get->body)["error"]["code"], "method_not_allowed");
  auto post_models = client_->Post("/v1/models", "{}", "application/json");
  ASSERT_TRUE(post_models);
  EXPECT_EQ(post_models->status, 405);
  EXPECT_EQ(post_models->get_header_value("Allow"), "GET, HEAD");
  EXPECT_EQ(client_->Delete("/healthz")->status, 405);
  auto unknown = client_->Get("/v1/nope");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json::parse(unknown->body)["error"]["code"], "not_found");
}

}  // namespace
