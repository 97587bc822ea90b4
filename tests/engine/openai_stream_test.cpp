// The openai decoder's streaming side against a scripted server: the event reader (fields in any
// order, nulls, escapes, errors), deltas that are whole characters when a character is split
// across TCP segments, the sampling fields sent, cancellation (the connection is closed, the
// server sees it), the errors a bad server makes, and many streams in flight on the one thread.
// The real engine's side: openai_engine_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "backends/openai_decoder.hpp"
#include "backends/openai_stream_event.hpp"
#include "ports/clock.hpp"
#include "ports/decoder.hpp"
#include "scripted_openai_server.hpp"

namespace overhead::backends {
namespace {

using namespace std::chrono_literals;
using testing::ScriptedOpenAiServer;

// --- the event reader --------------------------------------------------------------------------

struct Parsed {
  bool ok = false;
  std::string why, text, finish_reason, error_message;
  std::int64_t completion_tokens = -1, prompt_tokens = -1;
  bool has_error = false;
};

Parsed parse(const std::string& json) {
  CompletionEventParser parser;
  std::string buffer = json;
  buffer.reserve(json.size() + CompletionEventParser::kPadding);
  CompletionEvent ev;
  Parsed p;
  p.ok = parser.parse(buffer.data(), json.size(), buffer.capacity(), ev, p.why);
  p.text = std::string(ev.text);
  p.finish_reason = std::string(ev.finish_reason);
  p.error_message = std::string(ev.error_message);
  p.completion_tokens = ev.completion_tokens;
  p.prompt_tokens = ev.prompt_tokens;
  p.has_error = ev.has_error;
  return p;
}

TEST(CompletionEventParser, ReadsTheFieldsInAnyOrderAndSkipsTheRest) {
  const auto a = parse(R"({"usage":null,"choices":[{"logprobs":{"tokens":["x"],"top":[{"a":1}]},"finish_reason":null,)"
                       R"("text":"caf\u00e9 \ud83d\ude00\n\"q\"","index":0},{"text":"second choice"}],"id":"c","model":"m"})");
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_EQ(a.text, "caf\xC3\xA9 \xF0\x9F\x98\x80\n\"q\"") << "escapes unescaped, a surrogate pair is one character";
  EXPECT_EQ(a.finish_reason, "");
  EXPECT_EQ(a.completion_tokens, -1);

  const auto b = parse(R"({"id":"c","choices":[],"usage":{"total_tokens":9,"completion_tokens":7,"prompt_tokens":2}})");
  ASSERT_TRUE(b.ok) << b.why;
  EXPECT_EQ(b.text, "");
  EXPECT_EQ(b.completion_tokens, 7);
  EXPECT_EQ(b.prompt_tokens, 2);

  const auto c = parse(R"({"choices":[{"text":"","finish_reason":"length"}]})");
  ASSERT_TRUE(c.ok) << c.why;
  EXPECT_EQ(c.finish_reason, "length");
}

TEST(CompletionEventParser, AnErrorIsReadWithItsMessage) {
  const auto a = parse(R"({"error":{"message":"out of memory","type":"server_error","code":500}})");
  ASSERT_TRUE(a.ok) << a.why;
  EXPECT_TRUE(a.has_error);
  EXPECT_EQ(a.error_message, "out of memory");
  const auto b = parse(R"({"error":"boom"})");
  EXPECT_TRUE(b.has_error);
  EXPECT_EQ(b.error_message, "boom");
  EXPECT_FALSE(parse(R"({"error":null,"choices":[]})").has_error);
}

TEST(CompletionEventParser, WhatIsNoCompletionChunkIsRefusedSayingWhy) {
  for (const std::string bad : {"not json", "[1,2]", R"({"choices":{"text":"x"}})", R"({"choices":[{"text":5}]})",
                                R"({"usage":{"completion_tokens":"7"}})", R"({"choices":[{"text":"\ud83d"}]})",
                                "{\"choices\":[{\"text\":\"\xF0\x9F\"}]}", R"({"choices":[{"text":"x"})"}) {
    const auto p = parse(bad);
    EXPECT_FALSE(p.ok) << bad;
    EXPECT_FALSE(p.why.empty()) << bad;
  }
}

// --- streams against the scripted server -------------------------------------------------------

// Collects one generation's callbacks; wait() blocks until on_done / on_error.
class Collector final : public ports::DecodeCallbacks {
 public:
  std::function<void(Collector&)> after_text;  // e.g. cancel after the n-th delta

  void on_text(std::string_view text, std::int64_t) override {
    {
      std::lock_guard lock(mutex_);
      deltas.emplace_back(text);
      delta_ns.push_back(ports::monotonic_ns());
    }
    ++delta_count;
    if (after_text) after_text(*this);
  }
  void on_done(ports::DecodeResult r) override { end([&] { result = std::move(r); }); }
  void on_error(const ports::DecoderError& e) override {
    end([&] {
      error = e.what();
      retryable = e.retryable();
    });
  }
  bool wait(std::chrono::milliseconds limit = 20s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return ends > 0; });
  }
  std::string joined() const {
    std::string all;
    for (const auto& d : deltas) all += d;
    return all;
  }

  std::vector<std::string> deltas;
  std::vector<std::int64_t> delta_ns;
  std::atomic<int> delta_count{0};
  ports::DecodeResult result;
  std::string error;
  bool retryable = false;
  int ends = 0;

 private:
  template <class F>
  void end(F f) {
    std::lock_guard lock(mutex_);
    f();
    ++ends;
    cv_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable cv_;
};

ports::DecodeRequest streamed_request(std::string_view prompt = "<p>", std::int64_t max_tokens = 8) {
  ports::DecodeRequest r;
  r.prompt = prompt;
  r.prompt_tokens = 3;
  r.max_tokens = max_tokens;
  r.tokenizer = "llama";
  r.stream_text = true;
  return r;
}

std::shared_ptr<Collector> run(const OpenAiDecoder& d, const ports::DecodeRequest& req) {
  auto c = std::make_shared<Collector>();
  auto ticket = d.start(req, c);
  EXPECT_TRUE(c->wait());
  return c;
}

TEST(OpenAiStream, DeltasAreWholeCharactersWhenACharacterIsSplitAcrossSegments) {
  ScriptedOpenAiServer server;
  const std::string e1 = ScriptedOpenAiServer::text_event("h\xC3\xA9llo ");
  const std::string e2 = ScriptedOpenAiServer::text_event("\xF0\x9F\x98\x80 end", "length");
  const std::size_t cut1 = e1.find("\xC3\xA9") + 1, cut2 = e2.find("\xF0\x9F") + 2;
  server.writes = {e1.substr(0, cut1), e1.substr(cut1) + e2.substr(0, cut2), e2.substr(cut2),
                   ScriptedOpenAiServer::usage_event(3, 2), ScriptedOpenAiServer::done_event()};
  server.gap = 20ms;  // each write its own segment, read on its own
  const OpenAiDecoder d(parse_openai_decoder(server.url()));
  const auto c = run(d, streamed_request());
  ASSERT_TRUE(c->error.empty()) << c->error;
  EXPECT_EQ(c->deltas, (std::vector<std::string>{"h\xC3\xA9llo ", "\xF0\x9F\x98\x80 end"}));
  EXPECT_EQ(c->joined(), c->result.text);
  EXPECT_EQ(c->result.output_tokens, 2);
  EXPECT_EQ(c->result.finish_reason, "length");
  EXPECT_FALSE(c->result.cancelled);
  EXPECT_GT(c->result.first_token, c->result.decode_start);
  EXPECT_GE(c->result.decode_end, c->delta_ns.back());
}

TEST(OpenAiStream, TheRequestCarriesThePromptTheLimitAndTheSamplingFields) {
  ScriptedOpenAiServer server;
  server.writes = {ScriptedOpenAiServer::text_event("x", "stop"), ScriptedOpenAiServer::usage_event(3, 1),
                   ScriptedOpenAiServer::done_event()};
  const OpenAiDecoder d(parse_openai_decoder(server.url() + ",model=served"));
  ports::SamplingParams s;
  s.temperature = 0.0;
  s.top_p = 0.5;
  s.presence_penalty = 0.25;
  s.frequency_penalty = -0.5;
  s.seed = 42;
  s.stop = {"\n\n", "END"};
  s.user = "u-1";
  auto req = streamed_request("<|user|>h\xC3\xA9<|assistant|>", 5);
  req.sampling = &s;
  const auto c = run(d, req);
  ASSERT_TRUE(c->error.empty()) << c->error;
  EXPECT_EQ(c->result.finish_reason, "stop");
  const auto body = server.last_body();
  EXPECT_EQ(body["model"], "served");
  EXPECT_EQ(body["prompt"], "<|user|>h\xC3\xA9<|assistant|>");
  EXPECT_EQ(body["max_tokens"], 5);
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["stream_options"]["include_usage"], true);
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["top_p"], 0.5);
  EXPECT_EQ(body["presence_penalty"], 0.25);
  EXPECT_EQ(body["frequency_penalty"], -0.5);
  EXPECT_EQ(body["seed"], 42);
  EXPECT_EQ(body["stop"], nlohmann::json({"\n\n", "END"}));
  EXPECT_EQ(body["user"], "u-1");
  // Without sampling: none of them is sent (the engine's defaults).
  const auto plain = run(d, streamed_request());
  for (const char* k : {"temperature", "top_p", "seed", "stop", "user", "presence_penalty", "frequency_penalty"})
    EXPECT_FALSE(server.last_body().contains(k)) << k;
}

TEST(OpenAiStream, CancelClosesTheTransferAndEndsWithCancelled) {
  ScriptedOpenAiServer server;
  for (int i = 0; i < 400; ++i) server.writes.push_back(ScriptedOpenAiServer::text_event("t" + std::to_string(i) + " "));
  server.writes.push_back(ScriptedOpenAiServer::done_event());
  server.gap = 5ms;
  const OpenAiDecoder d(parse_openai_decoder(server.url()));
  auto c = std::make_shared<Collector>();
  std::shared_ptr<ports::DecodeTicket> ticket;
  std::mutex m;
  c->after_text = [&](Collector& self) {
    if (self.deltas.size() == 3) {
      std::lock_guard lock(m);
      ticket->cancel();  // from the decoder's own thread, inside a callback
      ticket->cancel();  // idempotent
    }
  };
  {
    std::lock_guard lock(m);
    ticket = d.start(streamed_request(), c);
  }
  ASSERT_TRUE(c->wait(5s));
  EXPECT_EQ(c->ends, 1);
  EXPECT_TRUE(c->error.empty()) << c->error;
  EXPECT_TRUE(c->result.cancelled);
  EXPECT_EQ(c->result.finish_reason, "cancelled");
  EXPECT_EQ(c->deltas.size(), 3u) << "nothing after the cancel";
  for (int i = 0; i < 200 && server.client_gone.load() == 0; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.client_gone.load(), 1) << "the server saw the client go";
  EXPECT_EQ(server.finished.load(), 0);
  ticket->cancel();  // after the end: nothing
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(c->ends, 1);
  EXPECT_EQ(d.in_flight(), 0u);
}

TEST(OpenAiStream, ABadServerIsAClearError) {
  struct Case {
    int status;
    std::string body;
    std::vector<std::string> writes;
    std::string content_type, spec_suffix, want;
    bool retryable;
  };
  const std::string text = ScriptedOpenAiServer::text_event("x");
  const std::vector<Case> cases = {
      {404, R"({"error":{"message":"The model `llama` does not exist.","type":"NotFoundError","code":404}})", {}, "", "",
       "HTTP 404: The model `llama` does not exist.", false},
      {400, R"({"object":"error","message":"max_tokens is too large"})", {}, "", "", "HTTP 400: max_tokens is too large", false},
      {503, "overloaded", {}, "", "", "HTTP 503: overloaded", true},
      {429, R"({"detail":"slow down"})", {}, "", "", "HTTP 429: slow down", true},
      {200, "", {R"({"id":"c","object":"text_completion","choices":[{"text":"x"}]})"}, "application/json", "",
       "not an OpenAI stream (a line is no server-sent event)", false},
      {200, "", {"data: <html>\n\n"}, "", "", "not an OpenAI stream (not a JSON object", false},
      {200, "", {text, "data: {\"error\":{\"message\":\"CUDA out of memory\"}}\n\n"}, "", "",
       "the server sent an error in the stream: CUDA out of memory", false},
      {200, "", {text}, "", "", "the stream ended without data: [DONE]", true},
      {200, "", {text, ScriptedOpenAiServer::done_event()}, "", ",usage=required", "the stream had no usage", false},
  };
  for (const auto& k : cases) {
    ScriptedOpenAiServer server;
    server.status = k.status;
    server.body = k.body;
    server.writes = k.writes;
    if (!k.content_type.empty()) server.content_type = k.content_type;
    const OpenAiDecoder d(parse_openai_decoder(server.url() + k.spec_suffix));
    const auto c = run(d, streamed_request());
    EXPECT_NE(c->error.find(k.want), std::string::npos) << c->error;
    EXPECT_NE(c->error.find("POST " + server.url() + "/completions"), std::string::npos) << c->error;
    EXPECT_EQ(c->retryable, k.retryable) << c->error;
    EXPECT_EQ(c->ends, 1);
  }
  // Without usage=required a stream without usage is fine: output_tokens -1 (the worker counts).
  ScriptedOpenAiServer server;
  server.writes = {text, ScriptedOpenAiServer::done_event()};
  const OpenAiDecoder d(parse_openai_decoder(server.url()));
  const auto c = run(d, streamed_request());
  EXPECT_TRUE(c->error.empty()) << c->error;
  EXPECT_EQ(c->result.output_tokens, -1);
}

TEST(OpenAiStream, AReceiverThatThrowsEndsItsOwnGenerationOnly) {
  ScriptedOpenAiServer server;
  server.writes = {ScriptedOpenAiServer::text_event("a"), ScriptedOpenAiServer::text_event("b"),
                   ScriptedOpenAiServer::usage_event(3, 2), ScriptedOpenAiServer::done_event()};
  server.gap = 5ms;
  const OpenAiDecoder d(parse_openai_decoder(server.url()));
  auto bad = std::make_shared<Collector>();
  bad->after_text = [](Collector&) { throw std::runtime_error("receiver bug"); };
  auto ticket = d.start(streamed_request(), bad);
  ASSERT_TRUE(bad->wait());
  EXPECT_NE(bad->error.find("the receiver of the text failed: receiver bug"), std::string::npos) << bad->error;
  EXPECT_EQ(bad->ends, 1);
  const auto good = run(d, streamed_request());  // the loop goes on
  EXPECT_TRUE(good->error.empty()) << good->error;
  EXPECT_EQ(good->result.text, "ab");
}

TEST(OpenAiStream, AnUnreachableServerIsATransientError) {
  std::string url;
  {
    ScriptedOpenAiServer gone;
    url = gone.url();
  }
  const OpenAiDecoder d(parse_openai_decoder(url));
  const auto c = run(d, streamed_request());
  EXPECT_NE(c->error.find("Couldn't connect"), std::string::npos) << c->error;
  EXPECT_TRUE(c->retryable);
  try {
    (void)d.decode(streamed_request());
    ADD_FAILURE() << "decode() answered without a server";
  } catch (const ports::DecoderError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
  }
}

TEST(OpenAiStream, ManyStreamsRunAtOnceOnTheDecodersThread) {
  constexpr int kStreams = 200;
  ScriptedOpenAiServer server(kStreams + 4);
  for (int i = 0; i < 10; ++i) server.writes.push_back(ScriptedOpenAiServer::text_event("w" + std::to_string(i)));
  server.writes.push_back(ScriptedOpenAiServer::usage_event(3, 10));
  server.writes.push_back(ScriptedOpenAiServer::done_event());
  server.gap = 30ms;  // 300 ms per stream
  const OpenAiDecoder d(parse_openai_decoder(server.url()));
  std::vector<std::shared_ptr<Collector>> all;
  std::vector<std::shared_ptr<ports::DecodeTicket>> tickets;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kStreams; ++i) {
    all.push_back(std::make_shared<Collector>());
    tickets.push_back(d.start(streamed_request(), all.back()));
  }
  for (auto& c : all) {
    ASSERT_TRUE(c->wait(30s));
    EXPECT_TRUE(c->error.empty()) << c->error;
    EXPECT_EQ(c->result.text, "w0w1w2w3w4w5w6w7w8w9");
    EXPECT_EQ(c->joined(), c->result.text);
    EXPECT_EQ(c->result.output_tokens, 10);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s) << "in flight together (one by one: 60 s)";
  EXPECT_EQ(d.in_flight(), 0u);
}

TEST(OpenAiStream, ClosingTheDecoderEndsWhatStillRunsWithAnError) {
  ScriptedOpenAiServer server;
  for (int i = 0; i < 200; ++i) server.writes.push_back(ScriptedOpenAiServer::text_event("t"));
  server.gap = 10ms;
  auto c = std::make_shared<Collector>();
  {
    const OpenAiDecoder d(parse_openai_decoder(server.url()));
    auto ticket = d.start(streamed_request(), c);
    for (int i = 0; i < 200 && c->delta_count.load() == 0; ++i) std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(c->wait(1s));
  EXPECT_NE(c->error.find("closed"), std::string::npos) << c->error;
  EXPECT_TRUE(c->retryable);
}

}  // namespace
}  // namespace overhead::backends
