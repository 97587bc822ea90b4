// The answer's text through the gateway: a synchronous completion carries the engine's text in
// message.content, a stream carries it as chat.completion.chunk deltas while the engine generates
// (the first well before the last), and their concatenation is the sync text; an asynchronous
// request keeps it in its `response`. From the fake OpenAI server of tests/support through the
// openai decoder, and from an asynchronous decoder that streams on one thread of its own (many
// generations in flight, no thread per stream in the worker); in process (mem:) and over a reply
// queue with a routing-only gateway and a remote worker (batched deltas, reply/queue_replies.hpp).
// The real llama.cpp engine: tests/engine.
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "backends/open.hpp"
#include "backends/queue_siblings.hpp"
#include "chat_fixture.hpp"
#include "ports/clock.hpp"
#include "pipe/source.hpp"
#include "pipe/worker_host.hpp"
#include "support/fake_openai.hpp"

namespace {

using namespace overhead;

// An asynchronous, streaming decoder: every generation in flight is ticked by one thread of its
// own, one piece "t<i> " every `interval`, then on_done with finish_reason "stop", as an engine
// batching many sequences would answer. With `pause`, a generation waits that long once it has
// sent `pause_after` pieces (0: before its first), as an engine that stalls would.
class TickingDecoder final : public ports::Decoder {
 public:
  TickingDecoder(int tokens, std::chrono::milliseconds interval, int pause_after = -1,
                 std::chrono::milliseconds pause = std::chrono::milliseconds(0))
      : tokens_(tokens), interval_(interval), pause_after_(pause_after), pause_(pause), thread_([this] { run(); }) {}
  ~TickingDecoder() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  std::string describe() const override { return "ticking:"; }
  ports::DecodeResult decode(const ports::DecodeRequest&) const override { throw ports::DecoderError("start() only"); }
  std::shared_ptr<ports::DecodeTicket> start(const ports::DecodeRequest& request,
                                            std::shared_ptr<ports::DecodeCallbacks> callbacks) const override {
    std::lock_guard lock(mutex_);
    const std::int64_t now = ports::monotonic_ns();
    live_.push_back(Live{std::move(callbacks), request.stream_text, 0, now, 0, {},
                         pause_after_ == 0 ? now + std::chrono::nanoseconds(pause_).count() : 0});
    max_live_ = std::max(max_live_, live_.size());
    cv_.notify_all();
    return nullptr;
  }
  std::size_t max_live() const {
    std::lock_guard lock(mutex_);
    return max_live_;
  }

 private:
  struct Live {
    std::shared_ptr<ports::DecodeCallbacks> callbacks;
    bool stream;
    int sent;
    std::int64_t start, first;
    std::string text;
    std::int64_t resume_ns;  // paused until then
  };
  void run() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (live_.empty()) {
        cv_.wait(lock);
        continue;
      }
      std::vector<Live> done;
      for (auto it = live_.begin(); it != live_.end();) {
        if (it->resume_ns > ports::monotonic_ns()) {
          ++it;
          continue;
        }
        const std::string piece = "t" + std::to_string(it->sent++) + " ";
        it->text += piece;
        if (it->first == 0) it->first = ports::monotonic_ns();
        if (it->stream) it->callbacks->on_text(piece, it->sent);
        if (it->sent == pause_after_) it->resume_ns = ports::monotonic_ns() + std::chrono::nanoseconds(pause_).count();
        if (it->sent == tokens_) {
          done.push_back(std::move(*it));
          it = live_.erase(it);
        } else {
          ++it;
        }
      }
      for (auto& d : done) {
        ports::DecodeResult r;
        r.decode_start = d.start;
        r.first_token = d.first;
        r.decode_end = ports::monotonic_ns();
        r.output_tokens = tokens_;
        r.text = std::move(d.text);
        r.finish_reason = "stop";
        d.callbacks->on_done(std::move(r));
      }
      cv_.wait_for(lock, interval_, [&] { return stop_; });
    }
  }
  int tokens_;
  std::chrono::milliseconds interval_;
  int pause_after_;
  std::chrono::milliseconds pause_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  mutable std::vector<Live> live_;
  mutable std::size_t max_live_ = 0;
  bool stop_ = false;
  std::thread thread_;
};
// A decoder whose every answer is `bytes` long: what a long generation leaves in the gateway.
class BigAnswerDecoder final : public ports::Decoder {
 public:
  explicit BigAnswerDecoder(std::size_t bytes) : bytes_(bytes) {}
  std::string describe() const override { return "big:"; }
  ports::DecodeResult decode(const ports::DecodeRequest&) const override {
    ports::DecodeResult r;
    r.decode_start = r.first_token = ports::monotonic_ns();
    r.text.assign(bytes_, 'a');
    r.output_tokens = 1;
    r.finish_reason = "stop";
    r.decode_end = ports::monotonic_ns();
    return r;
  }

 private:
  std::size_t bytes_;
};

using namespace std::chrono_literals;
using ChatTest = serve::testing::ChatServeTest;
using nlohmann::json;

const char* kBody = R"({"model":"phi-4","messages":[{"role":"user","content":"Count."}],"max_tokens":20)";

std::string engine_text(int tokens) {
  std::string out;
  for (int i = 0; i < tokens; ++i) out += "t" + std::to_string(i) + " ";
  return out;
}

struct StreamRead {
  int status = 0;
  std::vector<std::string> data;          // the `data:` payloads, in order
  std::vector<std::int64_t> content_ns;   // when each content delta arrived
  std::string content;                    // the deltas' text, concatenated
  std::string finish_reason;
};

// Posts a streaming request and reads the events as they arrive.
StreamRead read_stream(int port, const std::string& body) {
  StreamRead out;
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(60, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = body;
  req.set_header("Content-Type", "application/json");
  std::string pending;
  req.content_receiver = [&](const char* data, std::size_t len, std::uint64_t, std::uint64_t) {
    pending.append(data, len);
    for (std::size_t end; (end = pending.find("\n\n")) != std::string::npos;) {
      const std::string event = pending.substr(0, end);
      pending.erase(0, end + 2);
      if (event.rfind("data: ", 0) != 0) continue;
      out.data.push_back(event.substr(6));
      if (out.data.back() == "[DONE]") continue;
      const json j = json::parse(out.data.back());
      if (!j.contains("choices") || j["choices"].empty()) continue;
      const json& choice = j["choices"][0];
      if (choice["delta"].contains("content") && !choice["delta"]["content"].get<std::string>().empty()) {
        out.content += choice["delta"]["content"].get<std::string>();
        out.content_ns.push_back(ports::monotonic_ns());
      }
      if (!choice["finish_reason"].is_null()) out.finish_reason = choice["finish_reason"];
    }
    return true;
  };
  const auto res = client.send(req);
  if (res) out.status = res->status;
  return out;
}

void expect_streamed(const StreamRead& s, const std::string& text, bool while_generated = true) {
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.content, text) << "the deltas concatenate to the engine's text, nothing repeated or lost";
  ASSERT_FALSE(s.data.empty());
  EXPECT_EQ(s.data.back(), "[DONE]");
  EXPECT_FALSE(s.finish_reason.empty());
  if (!while_generated) return;
  ASSERT_GE(s.content_ns.size(), 2u) << "more than one delta: streamed, not sent at the end";
  // 20 tokens 30 ms apart: the first piece comes ~570 ms before the last one.
  EXPECT_GT(s.content_ns.back() - s.content_ns.front(), 300'000'000) << "the first delta arrived while the engine generated";
}

TEST_F(ChatTest, AnOpenAiServersTextComesBackSyncStreamedAndAsync) {
  test_support::FakeOpenAi engine;
  engine.tokens = 20;
  engine.interval = 30ms;
  serve::ServerOptions o;
  o.workers.worker.decoder = backends::open_decoder("openai:" + engine.url());
  o.workers.worker.max_decodes = 4;
  start(o);
  const std::string text = engine_text(20);

  const json sync = post("/v1/chat/completions", std::string(kBody) + "}", 200);
  EXPECT_EQ(sync["choices"][0]["message"]["content"], text);
  EXPECT_EQ(sync["usage"]["completion_tokens"], 20);
  EXPECT_FALSE(sync["choices"][0]["finish_reason"].get<std::string>().empty());

  // The openai decoder's own streaming (its callbacks as the server sends) is the engine's side
  // (tests/engine); here: the text and its shape, whole and in order.
  expect_streamed(read_stream(server_->bound_port(), std::string(kBody) + R"(,"stream":true})"), text, false);

  const json queued = post("/v1/requests", std::string(kBody) + "}", 202);
  json status;
  for (int i = 0; i < 200; ++i) {
    auto r = client_->Get(("/v1/requests/" + queued["id"].get<std::string>()).c_str());
    ASSERT_TRUE(r);
    status = json::parse(r->body);
    if (status["status"] != "queued") break;
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(status["status"], "done") << status.dump();
  EXPECT_EQ(status["response"]["choices"][0]["message"]["content"], text);
  // The record keeps the finish reason, not the text (no --store-text).
  // (This fake server sends no finish_reason: the record's is empty, the completion says "length".)
  EXPECT_TRUE(status["record"].contains("finish_reason"));
  EXPECT_EQ(status["record"]["text"], "");
}

// A routing-only gateway (no workers of its own) and a worker elsewhere, joined by a shared
// input queue and the gateway's reply queue (mem: queues, shared within the process): the
// worker's deltas reach the client in order, batched, while the engine generates. The gateway has
// no store (it stores nothing) and no decoder: the answers' fingerprint names the worker's decoder
// (it used to say "overhead-decoder-none" for text the worker generated), and the chunks sent
// before the worker's answer say null (unknown), never a guess.
TEST_F(ChatTest, AStreamCrossesTheReplyQueueFromARemoteWorker) {
  const std::string input = "mem:stream-in";
  const std::string reply_name = backends::reply_queue_name(input, "gw");
  serve::ServerOptions o;
  o.workers.threads = 0;
  o.models = {"phi-4", "gemma-2-27b-it"};
  o.pipeline.input = backends::open_queue(input);
  o.pipeline.log = backends::open_queue("mem:stream-log");
  o.pipeline.replies = backends::open_queue(backends::sibling_queue_url(input, reply_name));
  o.pipeline.reply_name = reply_name;
  o.pipeline.family = backends::open_queue_family(input);
  launch(o);

  // The remote worker: its own host, answering on the reply queue each item names.
  std::atomic<bool> stop_worker{false};
  pipe::WorkerHostOptions h;
  h.tokenizers = {"phi-4"};
  h.worker.decoder = std::make_shared<TickingDecoder>(20, 30ms);
  h.worker.max_decodes = 4;
  h.family = o.pipeline.family;
  pipe::WorkerHost host(std::move(h));
  pipe::QueueSource source(backends::open_queue(input), 100ms, 24h, &stop_worker);
  pipe::QueueSink log(backends::open_queue("mem:stream-log"));
  pipe::DeadLetterSink dead;
  std::thread worker([&] { (void)host.run(source, log, dead); });

  const std::string text = engine_text(20);
  const StreamRead s = read_stream(server_->bound_port(), std::string(kBody) + R"(,"stream":true})");
  expect_streamed(s, text);
  ASSERT_GE(s.data.size(), 3u);
  EXPECT_TRUE(json::parse(s.data.front())["system_fingerprint"].is_null()) << s.data.front();
  EXPECT_EQ(json::parse(s.data[s.data.size() - 2])["system_fingerprint"], "overhead-decoder-ticking") << s.data[s.data.size() - 2];
  const json sync = post("/v1/chat/completions", std::string(kBody) + "}", 200);
  EXPECT_EQ(sync["choices"][0]["message"]["content"], text);
  EXPECT_EQ(sync["system_fingerprint"], "overhead-decoder-ticking");
  stop_worker = true;
  worker.join();
  const auto counts = host.queue_replies()->counts();
  EXPECT_EQ(counts.sent, 2u);
  // Batched: 20 deltas of the stream cost far fewer broker calls (the first piece, then one per
  // 50 ms window, then the end).
  EXPECT_LT(counts.messages, 16u) << counts.deltas << " deltas";
}

// Many streams at once through one worker thread: each gets its own text, in order, while the
// decoder holds them in flight together (--max-decodes), not one after another.
TEST_F(ChatTest, ManyStreamsAreGeneratedAtOnceWithoutAThreadEach) {
  auto decoder = std::make_shared<TickingDecoder>(20, 30ms);
  serve::ServerOptions o;
  o.workers.worker.decoder = decoder;
  o.workers.worker.max_decodes = 8;
  start(o);
  (void)post("/v1/chat/completions", std::string(kBody) + "}", 200);  // the tokenizer loaded
  const std::int64_t start_ns = ports::monotonic_ns();
  std::vector<StreamRead> reads(8);
  std::vector<std::thread> clients;
  for (auto& r : reads)
    clients.emplace_back([&r, this] { r = read_stream(server_->bound_port(), std::string(kBody) + R"(,"stream":true})"); });
  for (auto& c : clients) c.join();
  const double seconds = double(ports::monotonic_ns() - start_ns) / 1e9;
  for (const auto& r : reads) expect_streamed(r, engine_text(20));
  // The proof is the decoder's own count, not the wall clock of a shared machine: one worker
  // thread had several generations in flight at once.
  EXPECT_GE(decoder->max_live(), 4u) << "generations in flight together (the eight streams took " << seconds << " s)";
}

// A gateway with ONE handler thread, whose worker may have eight generations in flight.
serve::ServerOptions one_handler_thread(std::shared_ptr<ports::Decoder> decoder) {
  serve::ServerOptions o;
  o.workers.worker.decoder = std::move(decoder);
  o.workers.worker.max_decodes = 8;
  o.threads = 1;
  return o;
}

// A stream holds no handler thread: with ONE handler thread, eight streams are answered together
// (before the stream was pumped by a chunked-content provider on the handler's thread, which it
// held until the stream ended: the second request was not even queued before the first ended).
TEST_F(ChatTest, StreamsHoldNoHandlerThread) {
  auto decoder = std::make_shared<TickingDecoder>(20, 30ms);
  start(one_handler_thread(decoder));
  (void)post("/v1/chat/completions", std::string(kBody) + "}", 200);  // the tokenizer loaded
  std::vector<StreamRead> reads(8);
  std::vector<std::thread> clients;
  for (auto& r : reads)
    clients.emplace_back([&r, this] { r = read_stream(server_->bound_port(), std::string(kBody) + R"(,"stream":true})"); });
  for (auto& c : clients) c.join();
  for (const auto& r : reads) expect_streamed(r, engine_text(20));
  EXPECT_GE(decoder->max_live(), 6u) << "the streams were generated together, one handler thread notwithstanding";
}

// A synchronous answer holds no handler thread either: with ONE handler thread, eight clients
// waiting for their whole answers are generated together (before, the handler thread waited in
// the reply box for its answer, so the next request was not even queued before the first ended).
TEST_F(ChatTest, SyncAnswersHoldNoHandlerThread) {
  auto decoder = std::make_shared<TickingDecoder>(20, 30ms);
  start(one_handler_thread(decoder));
  (void)post("/v1/chat/completions", std::string(kBody) + "}", 200);  // the tokenizer loaded
  std::vector<json> answers(8);
  std::vector<std::thread> clients;
  for (auto& a : answers)
    clients.emplace_back([&a, this] {
      httplib::Client c("127.0.0.1", server_->bound_port());
      c.set_read_timeout(60, 0);
      const auto r = c.Post("/v1/chat/completions", std::string(kBody) + "}", "application/json");
      if (r && r->status == 200) a = json::parse(r->body);
    });
  for (auto& c : clients) c.join();
  for (const auto& a : answers) {
    ASSERT_TRUE(a.is_object()) << "every client got a 200";
    EXPECT_EQ(a["choices"][0]["message"]["content"], engine_text(20));
  }
  EXPECT_GE(decoder->max_live(), 6u) << "the answers were generated together, one handler thread notwithstanding";
}

// Waits until an asynchronous request was answered: the tokenizer is loaded, and the next
// requests time only themselves.
void warm_up(httplib::Client& client, const json& accepted) {
  for (int i = 0; i < 600; ++i) {
    auto r = client.Get(("/v1/requests/" + accepted["id"].get<std::string>()).c_str());
    if (r && json::parse(r->body)["status"] != "queued") return;
    std::this_thread::sleep_for(50ms);
  }
}

// --stream-timeout ends a stream that no thread waits on: the deadline comes from the gateway's
// timer, as an error event after the text already sent, never a silent cut.
TEST_F(ChatTest, AStreamPastTheStreamTimeoutEndsWithAnErrorEvent) {
  serve::ServerOptions o;
  o.workers.worker.decoder = std::make_shared<TickingDecoder>(40, 50ms);
  o.workers.worker.max_decodes = 2;
  o.stream_timeout = 600ms;
  start(o);
  warm_up(*client_, post("/v1/requests", std::string(kBody) + "}", 202));
  const StreamRead s = read_stream(server_->bound_port(), std::string(kBody) + R"(,"max_tokens":40,"stream":true})");
  EXPECT_EQ(s.status, 200);
  ASSERT_FALSE(s.data.empty());
  EXPECT_FALSE(s.content.empty()) << "text went out before the deadline";
  const json last = json::parse(s.data.back());
  ASSERT_TRUE(last.contains("error")) << s.data.back();
  EXPECT_EQ(last["error"]["code"], "timeout");
  EXPECT_NE(last["error"]["message"].get<std::string>().find("--stream-timeout"), std::string::npos) << s.data.back();
  EXPECT_TRUE(engine_text(40).starts_with(s.content)) << "what was sent is a prefix of the answer";
}

// --request-timeout bounds a whole synchronous answer, not a stream: a stream that receives text
// all along (40 pieces 50 ms apart, about 2 s) outlives a request timeout of 300 ms and ends with
// [DONE], whole.
TEST_F(ChatTest, AStreamReceivingTextAllAlongOutlivesTheRequestTimeout) {
  serve::ServerOptions o;
  o.workers.worker.decoder = std::make_shared<TickingDecoder>(40, 50ms);
  o.workers.worker.max_decodes = 2;
  o.request_timeout = 300ms;
  o.stream_idle_timeout = 5s;
  start(o);
  warm_up(*client_, post("/v1/requests", std::string(kBody) + "}", 202));
  const StreamRead s = read_stream(server_->bound_port(), std::string(kBody) + R"(,"max_tokens":40,"stream":true})");
  expect_streamed(s, engine_text(40));
  // The same request answered whole is still bounded by --request-timeout.
  const auto sync = client_->Post("/v1/chat/completions", std::string(kBody) + R"(,"max_tokens":40})", "application/json");
  ASSERT_TRUE(sync);
  EXPECT_EQ(sync->status, 504) << sync->body;
}

// --stream-idle-timeout: a stream whose text stops coming (3 pieces, then a 4 s stall) ends with a
// timeout error event naming the bound after the text already sent.
TEST_F(ChatTest, AStreamThatStallsEndsAtTheIdleTimeout) {
  serve::ServerOptions o;
  o.workers.worker.decoder = std::make_shared<TickingDecoder>(6, 20ms, 3, 4s);
  o.workers.worker.max_decodes = 2;
  o.stream_idle_timeout = 1s;
  start(o);
  warm_up(*client_, post("/v1/requests", std::string(kBody) + "}", 202));
  const StreamRead s = read_stream(server_->bound_port(), std::string(kBody) + R"(,"max_tokens":6,"stream":true})");
  EXPECT_EQ(s.status, 200);
  EXPECT_EQ(s.content, engine_text(3)) << "the text before the stall went out";
  ASSERT_FALSE(s.data.empty());
  const json last = json::parse(s.data.back());
  ASSERT_TRUE(last.contains("error")) << s.data.back();
  EXPECT_EQ(last["error"]["code"], "timeout");
  EXPECT_NE(last["error"]["message"].get<std::string>().find("--stream-idle-timeout"), std::string::npos) << s.data.back();
}

// --first-token-timeout: a stream whose first text does not come in time gets a plain 504 (no
// stream began), naming the bound.
TEST_F(ChatTest, AStreamWithoutAFirstTokenInTimeIsA504) {
  serve::ServerOptions o;
  o.workers.worker.decoder = std::make_shared<TickingDecoder>(3, 20ms, 0, 3s);
  o.workers.worker.max_decodes = 2;
  o.first_token_timeout = 500ms;
  start(o);
  const StreamRead s = read_stream(server_->bound_port(), std::string(kBody) + R"(,"max_tokens":3,"stream":true})");
  EXPECT_EQ(s.status, 504);
  EXPECT_TRUE(s.content.empty());
}

// The finished asynchronous answers are bounded in bytes, not only in count: 8 answers of 2 MiB
// with a 9 MiB bound keep the newest four; asking for an older one is a 410 naming the bound, not
// a 200 (kept beyond the bound) nor a 404 (never known).
TEST_F(ChatTest, KeptAsyncAnswersAreBoundedInBytesAndTheOldestAreGone) {
  constexpr std::size_t kAnswer = std::size_t{2} << 20;
  serve::ServerOptions o;
  o.workers.worker.decoder = std::make_shared<BigAnswerDecoder>(kAnswer);
  o.max_kept_bytes = std::size_t{9} << 20;
  start(o);
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) {
    const json accepted = post("/v1/requests", std::string(kBody) + "}", 202);
    ids.push_back(accepted["id"]);
    warm_up(*client_, accepted);
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    SCOPED_TRACE(ids[i]);
    const auto r = client_->Get(("/v1/requests/" + ids[i]).c_str());
    ASSERT_TRUE(r);
    if (i < 4) {
      EXPECT_EQ(r->status, 410) << "evicted to stay within --max-kept-bytes";
      const json e = json::parse(r->body);
      EXPECT_EQ(e["error"]["code"], "expired");
      EXPECT_NE(e["error"]["message"].get<std::string>().find("--max-kept-bytes"), std::string::npos);
    } else {
      ASSERT_EQ(r->status, 200);
      const json j = json::parse(r->body);
      EXPECT_EQ(j["status"], "done");
      EXPECT_EQ(j["response"]["choices"][0]["message"]["content"].get<std::string>().size(), kAnswer);
    }
  }
  EXPECT_EQ(client_->Get("/v1/requests/req_neverqueued")->status, 404) << "an id never seen is still unknown";
}

}  // namespace
