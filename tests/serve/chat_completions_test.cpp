// POST /v1/chat/completions, POST /v1/requests and GET /v1/requests/{id} through the in-process
// pipeline: OpenAI's response and chunk shapes, usage.prompt_tokens equal to `overhead tokenize
// --chat` on the same messages, the worker's refusals as 4xx naming the field, and a record per
// request in the store with its stamps.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "chat_fixture.hpp"
#include "ports/store.hpp"

namespace {

using ChatTest = overhead::serve::testing::ChatServeTest;
using nlohmann::json;

const char* kMessages = R"([{"role":"system","content":"Answer briefly."},{"role":"user","content":"こんにちは、世界! 2+2?"}])";

// `overhead tokenize --chat` on one conversation: the number of ids it prints.
std::size_t cli_chat_count(const std::filesystem::path& dir, const std::string& tokenizer, const std::string& messages) {
  const auto input = dir / "conversation.jsonl";
  std::ofstream(input) << R"({"messages":)" << messages << "}\n";
  const std::string cmd = std::string(OVERHEAD_BINARY) + " tokenize --chat --tokenizer " + tokenizer + " --input " + input.string();
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return 0;
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(::pclose(p), 0) << out;
  return json::parse(out).at("ids").size();
}

// The `data:` payloads of a server-sent event stream, in order.
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("data: ", 0) == 0) out.push_back(line.substr(6));
  return out;
}

TEST_F(ChatTest, ACompletionInOpenAIsShapeCountsThePromptAsTokenizeChatDoes) {
  start();
  const json c = post("/v1/chat/completions", std::string(R"({"model":"microsoft/phi-4","messages":)") + kMessages + "}", 200);
  EXPECT_EQ(c.at("object"), "chat.completion");
  EXPECT_EQ(c.at("id").get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(c.at("model"), "microsoft/phi-4");
  EXPECT_GT(c.at("created").get<std::int64_t>(), 1700000000);
  ASSERT_EQ(c.at("choices").size(), 1u);
  EXPECT_EQ(c["choices"][0]["message"]["role"], "assistant");
  // --decoder none: no answer, no completion tokens, and said so.
  EXPECT_EQ(c["choices"][0]["message"]["content"], "");
  EXPECT_EQ(c["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(c["system_fingerprint"], "overhead-decoder-none");
  const std::size_t expected = cli_chat_count(dir_, "phi-4", kMessages);
  ASSERT_GT(expected, 5u);
  EXPECT_EQ(c["usage"]["prompt_tokens"].get<std::size_t>(), expected);
  EXPECT_EQ(c["usage"]["completion_tokens"], 0);
  EXPECT_EQ(c["usage"]["total_tokens"].get<std::size_t>(), expected);
  // The stages of the request are on /metrics.
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  for (const char* stage : {"queue", "render", "encode", "publish", "total"})
    EXPECT_NE(m->body.find(std::string("overhead_stage_duration_seconds_count{stage=\"") + stage + "\"} 1\n"), std::string::npos)
        << stage << "\n" << m->body;
}

TEST_F(ChatTest, EachRequestLeavesARecordWithItsStampsInTheStore) {
  start();
  const json a = post("/v1/chat/completions", std::string(R"({"model":"phi-4","messages":)") + kMessages + "}", 200);
  const json b = post("/v1/chat/completions", R"({"model":"google/gemma-2-27b-it","messages":[{"role":"user","content":"hi"}]})", 200);
  stop();  // the pipeline drains: the consumer has stored every record and stamp patch
  const auto records = overhead::ports::scan_in_key_order(*store_, "serve");
  ASSERT_EQ(records.size(), 2u);
  for (const auto& r : records) {
    const json& c = r.tokenizer == "phi-4" ? a : b;
    EXPECT_EQ(r.id, c.at("id").get<std::string>());
    EXPECT_EQ(r.experiment_tokenizer, "serve#" + r.tokenizer);
    EXPECT_EQ(r.model, c.at("model").get<std::string>());
    EXPECT_EQ(r.token_count, c["usage"]["prompt_tokens"].get<std::int64_t>());
    EXPECT_GT(r.received, 0);
    EXPECT_LE(r.received, r.render_start);
    EXPECT_LE(r.render_start, r.render_end);
    EXPECT_LE(r.render_end, r.encode_end);
    EXPECT_LE(r.encode_end, r.publish_start);
    EXPECT_GE(r.publish_acked, r.publish_start);
    EXPECT_GE(r.input_deleted, r.publish_acked);
    EXPECT_EQ(r.worker, "serve-worker-0");
  }
  EXPECT_EQ(records[0].tokenizer, "gemma-2-27b-it");  // the listed name of google/gemma-2-27b-it
}

TEST_F(ChatTest, AStreamIsOpenAIsChunksEndingWithDone) {
  start();
  auto r = client_->Post("/v1/chat/completions",
                         std::string(R"({"model":"phi-4","stream":true,"stream_options":{"include_usage":true},"messages":)") + kMessages + "}",
                         "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/event-stream", 0), 0u);
  const auto data = sse_data(r->body);
  ASSERT_EQ(data.size(), 4u) << r->body;  // role, finish, usage, [DONE]
  EXPECT_EQ(data.back(), "[DONE]");
  const json role = json::parse(data[0]), finish = json::parse(data[1]), usage = json::parse(data[2]);
  for (const json* j : {&role, &finish, &usage}) {
    EXPECT_EQ((*j)["object"], "chat.completion.chunk");
    EXPECT_EQ((*j)["id"], role["id"]);
  }
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(role["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(finish["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["prompt_tokens"].get<std::size_t>(), cli_chat_count(dir_, "phi-4", kMessages));

  // Without include_usage there is no usage chunk.
  auto plain = client_->Post("/v1/chat/completions", std::string(R"({"model":"phi-4","stream":true,"messages":)") + kMessages + "}",
                             "application/json");
  ASSERT_TRUE(plain);
  EXPECT_EQ(sse_data(plain->body).size(), 3u) << plain->body;
}

TEST_F(ChatTest, RefusalsAreOpenAIErrorsNamingTheField) {
  start();
  EXPECT_EQ(post("/v1/chat/completions", "{nope", 400)["error"]["code"], "invalid_json");
  EXPECT_EQ(post("/v1/chat/completions", R"({"model":"phi-4"})", 400)["error"]["param"], "messages");
  EXPECT_EQ(post("/v1/chat/completions", R"({"model":"phi-4","messages":[{"role":"user","content":3}]})", 400)["error"]["param"],
            "messages[0].content");
  const json unknown = post("/v1/chat/completions", R"({"model":"gpt-9","messages":[{"role":"user","content":"a"}]})", 404);
  EXPECT_EQ(unknown["error"]["code"], "model_not_found");
  EXPECT_EQ(unknown["error"]["param"], "model");
  // Gemma-2's template refuses a system message: the worker's refusal comes back as a 400.
  const json refused = post("/v1/chat/completions",
                            R"({"model":"gemma-2-27b-it","messages":[{"role":"system","content":"s"},{"role":"user","content":"a"}]})", 400);
  EXPECT_EQ(refused["error"]["code"], "template_error");
  EXPECT_EQ(refused["error"]["param"], "messages");
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("System role not supported"), std::string::npos);
  // ... and is a dead letter of its kind, counted on /metrics (the worker files it just after
  // the reply went out).
  const std::string letter = "overhead_dead_letters_total{kind=\"template_error\"} 1\n";
  std::string metrics;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  do {
    auto m = client_->Get("/metrics");
    ASSERT_TRUE(m);
    metrics = m->body;
  } while (metrics.find(letter) == std::string::npos && std::chrono::steady_clock::now() < deadline);
  EXPECT_NE(metrics.find(letter), std::string::npos) << metrics;
}

TEST_F(ChatTest, AnAsynchronousRequestIsPolledUntilDone) {
  start();
  auto r = client_->Post("/v1/requests", std::string(R"({"model":"phi-4","messages":)") + kMessages + "}", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 202) << r->body;
  const std::string id = json::parse(r->body).at("id");
  EXPECT_EQ(r->get_header_value("Location"), "/v1/requests/" + id);
  json s;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    auto g = client_->Get(("/v1/requests/" + id).c_str());
    ASSERT_TRUE(g);
    ASSERT_EQ(g->status, 200) << g->body;
    s = json::parse(g->body);
    if (s["status"] != "queued") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < deadline);
  ASSERT_EQ(s["status"], "done") << s.dump();
  EXPECT_EQ(s["response"]["object"], "chat.completion");
  EXPECT_EQ(s["record"]["id"], id);
  EXPECT_EQ(s["record"]["token_count"].get<std::size_t>(), cli_chat_count(dir_, "phi-4", kMessages));
  EXPECT_EQ(s["response"]["usage"]["prompt_tokens"], s["record"]["token_count"]);

  // A refused one ends as failed, with the error body's fields.
  auto bad = client_->Post("/v1/requests", R"({"model":"gemma-2-27b-it","messages":[{"role":"system","content":"s"}]})", "application/json");
  ASSERT_TRUE(bad);
  ASSERT_EQ(bad->status, 202);
  const std::string bad_id = json::parse(bad->body).at("id");
  do {
    s = json::parse(client_->Get(("/v1/requests/" + bad_id).c_str())->body);
    if (s["status"] != "queued") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(s["status"], "failed");
  EXPECT_EQ(s["error"]["code"], "template_error");

  EXPECT_EQ(post("/v1/requests", R"({"model":"phi-4","stream":true,"messages":[{"role":"user","content":"a"}]})", 400)["error"]["param"],
            "stream");
  auto missing = client_->Get("/v1/requests/req_000000000000000000000000");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"]["code"], "not_found");
  // A synchronous id is not kept for lookup.
  const json sync = post("/v1/chat/completions", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}]})", 200);
  EXPECT_EQ(client_->Get(("/v1/requests/" + sync.at("id").get<std::string>()).c_str())->status, 404);
}

TEST_F(ChatTest, AFullQueueRefusesWith429BeforeSending) {
  overhead::serve::ServerOptions o;
  o.max_queued = 0;
  o.retry_after_s = 3;
  start(o);
  auto r = client_->Post("/v1/chat/completions", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}]})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "3");
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "rate_limit_exceeded");
  stop();
  EXPECT_TRUE(overhead::ports::scan_in_key_order(*store_, "serve").empty());
}

// The replies go out once a record is on the log queue, so a store slower than the workers would
// let the log queue grow without bound; past --max-log-backlog records awaiting the consumer, a
// request gets 429 instead. Two stamp patches for a record that is not stored stay on the log queue
// (the consumer defers them until their visibility timeout), a backlog of 2.
TEST_F(ChatTest, AStoreThatFallsBehindRefusesWith429) {
  overhead::serve::ServerOptions o;
  o.pipeline.log = overhead::backends::open_queue("mem:?visibility_ms=600000");
  const std::string patch =
      R"({"stamps":[{"experiment_tokenizer":"serve#phi-4","id":"not-stored","publish_acked":1,"input_deleted":0}]})";
  overhead::ports::send_all(*o.pipeline.log, std::vector<std::string>{patch, patch});
  o.max_log_backlog = 2;
  o.retry_after_s = 2;
  start(o);
  auto r = client_->Post("/v1/chat/completions", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}]})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 429);
  EXPECT_EQ(r->get_header_value("Retry-After"), "2");
  const json error = json::parse(r->body)["error"];
  EXPECT_EQ(error["code"], "rate_limit_exceeded");
  EXPECT_NE(error["message"].get<std::string>().find("2 records await the consumer"), std::string::npos) << error;
  const auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("overhead_log_queue_messages{state=\"in_flight\"}"), std::string::npos);
}

// --decoder sim behind the gateway: the request's max_tokens is the wanted length, the
// completion counts it, the fingerprint names the decoder, and the stored record carries the
// decoder's stamps; /metrics gains the decode stage.
TEST_F(ChatTest, WithTheSimDecoderTheCompletionCountsMaxTokensAndTheRecordItsStamps) {
  overhead::serve::ServerOptions o;
  o.workers.worker.decoder = overhead::backends::open_decoder("sim:prefill=1e6,decode=2000,ttft_ms=1");
  start(o);
  const json c = post("/v1/chat/completions", R"({"model":"phi-4","max_tokens":40,"messages":[{"role":"user","content":"a"}]})", 200);
  EXPECT_EQ(c["system_fingerprint"], "overhead-decoder-sim");
  EXPECT_EQ(c["usage"]["completion_tokens"], 40);
  EXPECT_EQ(c["choices"][0]["message"]["content"], "") << "no text is made up";
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("overhead_stage_duration_seconds_count{stage=\"decode\"} 1\n"), std::string::npos) << m->body;
  stop();
  const auto records = overhead::ports::scan_in_key_order(*store_, "serve");
  ASSERT_EQ(records.size(), 1u);
  const auto& r = records[0];
  EXPECT_EQ(r.output_tokens, 40);
  EXPECT_LE(r.encode_end, r.decode_start);
  EXPECT_GE(r.first_token - r.decode_start, 1'000'000);
  EXPECT_GE(r.decode_end - r.first_token, 20'000'000) << "40 tokens at 2000/s";
  EXPECT_LE(r.decode_end, r.publish_start);
}

// A decoder that cannot reach its server: after the retries the request is answered 502
// decode_failed (not left to time out), and the dead letter is counted.
TEST_F(ChatTest, AFailingDecoderIsA502AndACountedDeadLetter) {
  overhead::serve::ServerOptions o;
  {
    // A port that was free a moment ago, with nobody listening now: connections are refused.
    httplib::Server gone;
    const int port = gone.bind_to_any_port("127.0.0.1");
    std::thread t([&] { gone.listen_after_bind(); });
    while (!gone.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    gone.stop();
    t.join();
    o.workers.worker.decoder = overhead::backends::open_decoder("openai:http://127.0.0.1:" + std::to_string(port) + "/v1,timeout_ms=10000");
  }
  start(o);
  const json e = post("/v1/chat/completions", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}]})", 502);
  EXPECT_EQ(e["error"]["code"], "decode_failed");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("openai decoder"), std::string::npos) << e.dump();
  auto m = client_->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("overhead_dead_letters_total{kind=\"decode_failed\"} 1\n"), std::string::npos) << m->body;
}

TEST_F(ChatTest, WithoutAPipelineTheChatRoutesAreNotServed) {
  overhead::serve::ServerOptions o;
  o.port = 0;
  overhead::serve::Server s(o);
  s.bind();
  std::thread t([&] { s.run(); });
  httplib::Client c("127.0.0.1", s.bound_port());
  auto r = c.Post("/v1/chat/completions", R"({"model":"phi-4","messages":[{"role":"user","content":"a"}]})", "application/json");
  s.stop();
  t.join();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

}  // namespace
