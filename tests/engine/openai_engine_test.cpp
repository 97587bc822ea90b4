// The openai decoder against the real engine (llama.cpp, tests/support/llama_engine.hpp): at
// temperature 0 its text equals the engine's own unstreamed completion of the same prompt, the
// streamed deltas concatenate to it and the first comes before the last, completion_tokens and
// finish_reason are the engine's; stop strings pass through; cancel() makes the engine stop
// generating; many generations run at once on the decoder's one thread (the engine batches them),
// each whole, with the engine's usage. Tokenize once: the ids of the prompt (prompt=ids) give the
// engine's own completion of those ids, with one BOS where the text path gives two, and ids the
// engine's vocabulary does not hold are refused naming the model and the tokenizer.
#include <gtest/gtest.h>

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "backends/openai_decoder.hpp"
#include "llama_engine.hpp"
#include "ports/clock.hpp"
#include "tok/tokenizer.hpp"

namespace overhead::backends {
namespace {

using namespace std::chrono_literals;

constexpr const char* kPrompt =
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWrite a short poem about queues.<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n";

class Receiver final : public ports::DecodeCallbacks {
 public:
  std::function<void(Receiver&)> after_text;
  std::string joined;
  int deltas = 0;
  std::int64_t first_delta_ns = 0, last_delta_ns = 0;
  ports::DecodeResult result;
  std::string error;
  bool ended = false;

  void on_text(std::string_view text, std::int64_t) override {
    joined += text;
    ++deltas;
    last_delta_ns = ports::monotonic_ns();
    if (!first_delta_ns) first_delta_ns = last_delta_ns;
    if (after_text) after_text(*this);
  }
  void on_done(ports::DecodeResult r) override { end([&] { result = std::move(r); }); }
  void on_error(const ports::DecoderError& e) override { end([&] { error = e.what(); }); }
  bool wait(std::chrono::seconds limit = 60s) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return ended; });
  }

 private:
  template <class F>
  void end(F f) {
    std::lock_guard lock(mutex_);
    f();
    ended = true;
    cv_.notify_all();
  }
  std::mutex mutex_;
  std::condition_variable cv_;
};

nlohmann::json engine_get(const testing::LlamaEngine& engine, const std::string& path) {
  httplib::Client client("127.0.0.1", engine.port());
  const auto res = client.Get(path.c_str());
  if (!res || res->status != 200) throw std::runtime_error("GET " + path + " failed");
  return nlohmann::json::parse(res->body);
}

// The engine's own answer: an unstreamed POST /v1/completions (of kPrompt unless the body has a prompt).
nlohmann::json engine_completion(const testing::LlamaEngine& engine, nlohmann::json body) {
  httplib::Client client("127.0.0.1", engine.port());
  client.set_read_timeout(60, 0);
  body["model"] = "tiny-llama3";
  if (!body.contains("prompt")) body["prompt"] = kPrompt;
  const auto res = client.Post("/v1/completions", body.dump(), "application/json");
  if (!res || res->status != 200) throw std::runtime_error("the engine's completion failed");
  return nlohmann::json::parse(res->body);
}

ports::DecodeRequest request(std::int64_t max_tokens, const ports::SamplingParams* sampling) {
  ports::DecodeRequest r;
  r.prompt = kPrompt;
  r.max_tokens = max_tokens;
  r.tokenizer = "tiny-llama3";
  r.sampling = sampling;
  r.stream_text = true;
  return r;
}

class OpenAiEngine : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { engine_ = new testing::LlamaEngine({.sequences = 8}); }
  static void TearDownTestSuite() {
    delete engine_;
    engine_ = nullptr;
  }
  static testing::LlamaEngine* engine_;
};
testing::LlamaEngine* OpenAiEngine::engine_ = nullptr;

TEST_F(OpenAiEngine, TheStreamIsTheEnginesOwnCompletionWithItsUsageAndFinishReason) {
  const auto reference = engine_completion(*engine_, {{"max_tokens", 48}, {"temperature", 0}});
  const std::string want = reference["choices"][0]["text"];
  ASSERT_FALSE(want.empty());

  const OpenAiDecoder d(parse_openai_decoder(engine_->base_url()));
  ports::SamplingParams greedy;
  greedy.temperature = 0.0;
  auto r = std::make_shared<Receiver>();
  auto ticket = d.start(request(48, &greedy), r);
  ASSERT_TRUE(r->wait());
  ASSERT_TRUE(r->error.empty()) << r->error;
  EXPECT_EQ(r->result.text, want);
  EXPECT_EQ(r->joined, want) << "the deltas concatenate to the engine's text";
  EXPECT_GT(r->deltas, 10) << "streamed as generated, not at the end";
  EXPECT_LT(r->first_delta_ns, r->last_delta_ns);
  EXPECT_EQ(r->result.output_tokens, reference["usage"]["completion_tokens"].get<std::int64_t>());
  EXPECT_EQ(r->result.finish_reason, reference["choices"][0]["finish_reason"].get<std::string>());
  EXPECT_EQ(r->result.finish_reason, "length");
  EXPECT_LE(r->result.decode_start, r->result.first_token);
  EXPECT_LE(r->result.first_token, r->result.decode_end);

  // decode(), the batch runs' path: the same answer.
  const ports::DecodeResult sync = d.decode(request(48, &greedy));
  EXPECT_EQ(sync.text, want);
  EXPECT_EQ(sync.output_tokens, r->result.output_tokens);

  // A stop string from the sampling fields: the engine's own cut, finish_reason stop.
  ports::SamplingParams stopping = greedy;
  stopping.stop = {want.substr(want.size() / 2, 4)};
  const auto cut = engine_completion(*engine_, {{"max_tokens", 48}, {"temperature", 0}, {"stop", stopping.stop}});
  const ports::DecodeResult stopped = d.decode(request(48, &stopping));
  EXPECT_EQ(stopped.text, cut["choices"][0]["text"].get<std::string>());
  EXPECT_EQ(stopped.finish_reason, "stop");
  EXPECT_LT(stopped.text.size(), want.size());
}

TEST_F(OpenAiEngine, CancelStopsTheEngine) {
  const OpenAiDecoder d(parse_openai_decoder(engine_->base_url()));
  const auto before = engine_get(*engine_, "/engine/stats");
  ports::SamplingParams greedy;
  greedy.temperature = 0.0;
  auto r = std::make_shared<Receiver>();
  std::shared_ptr<ports::DecodeTicket> ticket;
  std::mutex m;
  r->after_text = [&](Receiver& self) {
    if (self.deltas == 3) {
      std::lock_guard lock(m);
      ticket->cancel();
    }
  };
  {
    std::lock_guard lock(m);
    ticket = d.start(request(1500, &greedy), r);
  }
  ASSERT_TRUE(r->wait());
  EXPECT_TRUE(r->result.cancelled);
  EXPECT_EQ(r->result.finish_reason, "cancelled");
  nlohmann::json now;
  for (int i = 0; i < 100; ++i) {
    now = engine_get(*engine_, "/engine/stats");
    if (now["cancelled"] > before["cancelled"] && now["active"] == 0) break;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(now["cancelled"], before["cancelled"].get<int>() + 1) << now.dump();
  EXPECT_EQ(now["active"], 0);
  const auto generated = now["generated_tokens"].get<std::int64_t>() - before["generated_tokens"].get<std::int64_t>();
  EXPECT_LT(generated, 1500) << "the engine stopped generating";
}

// Overlapping generations are batched by the engine, which changes its rounding: their greedy texts
// may differ from one run alone (llama_server.mjs), so each is checked against its own usage.
TEST_F(OpenAiEngine, ManyGenerationsAtOnceEachGetTheirWholeAnswer) {
  const auto before = engine_get(*engine_, "/engine/stats");
  const OpenAiDecoder d(parse_openai_decoder(engine_->base_url() + ",usage=required"));
  ports::SamplingParams greedy;
  greedy.temperature = 0.0;
  std::vector<std::shared_ptr<Receiver>> all;
  std::vector<std::shared_ptr<ports::DecodeTicket>> tickets;
  for (int i = 0; i < 16; ++i) {  // twice the engine's sequences: half wait their turn there
    all.push_back(std::make_shared<Receiver>());
    tickets.push_back(d.start(request(24, &greedy), all.back()));
  }
  for (auto& r : all) {
    ASSERT_TRUE(r->wait());
    ASSERT_TRUE(r->error.empty()) << r->error;
    EXPECT_FALSE(r->result.text.empty());
    EXPECT_EQ(r->joined, r->result.text);
    EXPECT_EQ(r->result.output_tokens, 24);
    EXPECT_EQ(r->result.finish_reason, "length");
  }
  const auto after = engine_get(*engine_, "/engine/stats");
  EXPECT_EQ(after["completed"].get<int>() - before["completed"].get<int>(), 16);
}

// The tiny model's vocabulary is the Llama-3.3 tokenizer's (scripts/make_tiny_gguf.py).
TEST_F(OpenAiEngine, TokenIdsInGiveTheEnginesOwnCompletionOfThemWithOneBos) {
  const auto tokenizer = tok::Tokenizer::load("llama-3.3-70b-instruct");
  const tok::Ids ids = tokenizer->encode(kPrompt, false);  // the chat path: the template's tokens, nothing added
  constexpr std::uint32_t kBos = 128000;                   // <|begin_of_text|>
  ASSERT_EQ(std::count(ids.begin(), ids.end(), kBos), 1) << "the template writes BOS once";
  ASSERT_EQ(ids.front(), kBos);
  const auto reference = engine_completion(*engine_, {{"max_tokens", 32}, {"temperature", 0}, {"prompt", ids}});
  const std::string want = reference["choices"][0]["text"];
  ASSERT_FALSE(want.empty());
  EXPECT_EQ(reference["usage"]["prompt_tokens"].get<std::size_t>(), ids.size());

  const OpenAiDecoder d(parse_openai_decoder(engine_->base_url() + ",dialect=llamacpp"));
  ASSERT_EQ(d.prompt_form(), ports::PromptForm::ids);
  ports::SamplingParams greedy;
  greedy.temperature = 0.0;
  ports::DecodeRequest req = request(32, &greedy);
  req.prompt_ids = ids;
  auto r = std::make_shared<Receiver>();
  (void)d.start(req, r);
  ASSERT_TRUE(r->wait());
  ASSERT_TRUE(r->error.empty()) << r->error;
  EXPECT_EQ(r->result.text, want) << "ids in: the engine's own completion of the same ids";
  EXPECT_EQ(r->joined, want);
  EXPECT_EQ(r->result.engine_prompt_tokens, static_cast<std::int64_t>(ids.size())) << "one BOS at the engine";

  // The same prompt as text: the engine tokenizes it again and puts its BOS before the template's.
  const OpenAiDecoder text(parse_openai_decoder(engine_->base_url()));
  const ports::DecodeResult as_text = text.decode(request(32, &greedy));
  EXPECT_EQ(as_text.engine_prompt_tokens, static_cast<std::int64_t>(ids.size()) + 1) << "two BOS: the text path's";
}

TEST_F(OpenAiEngine, IdsOutsideTheEnginesVocabularyAreRefusedNamingTheModelAndTheTokenizer) {
  const OpenAiDecoder d(parse_openai_decoder(engine_->base_url() + ",dialect=llamacpp,model=tiny-llama3"));
  const std::vector<std::uint32_t> ids = {128000, 9906, 1u << 20};  // the last is no id of a 128K vocabulary
  ports::DecodeRequest req = request(8, nullptr);
  req.prompt_ids = ids;
  req.tokenizer = "phi-4";  // the item's tokenizer, not the engine's model
  auto r = std::make_shared<Receiver>();
  (void)d.start(req, r);
  ASSERT_TRUE(r->wait());
  ASSERT_FALSE(r->error.empty()) << "refused, never sent again as text";
  EXPECT_NE(r->error.find("model tiny-llama3, tokenizer phi-4"), std::string::npos) << r->error;
  EXPECT_NE(r->error.find("out of vocabulary"), std::string::npos) << "the engine's own words: " << r->error;
}

}  // namespace
}  // namespace overhead::backends
