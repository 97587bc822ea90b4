// The decoder stage (`--decoder`): its forms parse or are refused naming the bad part; `sim`
// waits the modelled time and the worker stamps it into the record; `openai` reads a streamed
// answer from a fake OpenAI-compatible server on loopback (its measured D matches the rate the
// server streams at), and a server that fails or is not there makes a counted dead letter.
#include <gtest/gtest.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/open.hpp"
#include "backends/curl_stream_loop.hpp"
#include "backends/openai_decoder.hpp"
#include "backends/sim_decoder.hpp"
#include "fake_processor.hpp"
#include "ports/errors.hpp"
#include "pipe/worker.hpp"
#include "support/fake_openai.hpp"

namespace overhead::pipe {
using ports::DecodeCallbacks;
using ports::Decoder;
using ports::DecodeRequest;
using ports::DecoderError;
using ports::DecodeResult;
using ports::DecodeTicket;
using ports::monotonic_ns;
using ports::Record;
using ports::thread_cpu_ns;
using backends::open_decoder;
namespace {

using namespace std::chrono_literals;
constexpr std::int64_t kMs = 1'000'000;  // ns

// --- the forms -------------------------------------------------------------------------------

TEST(DecoderSpec, GoodForms) {
  EXPECT_EQ(open_decoder("none"), nullptr);

  auto sim = open_decoder("sim:prefill=5000,decode=50");
  ASSERT_NE(sim, nullptr);
  const auto* s = dynamic_cast<const backends::SimDecoder*>(sim.get());
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(s->params().prefill_tok_s, 5000);
  EXPECT_DOUBLE_EQ(s->params().decode_tok_s, 50);
  EXPECT_DOUBLE_EQ(s->params().ttft_ms, 0);
  EXPECT_EQ(sim->prompt_form(), ports::PromptForm::none);
  EXPECT_EQ(sim->describe(), "sim:prefill=5000,decode=50,ttft_ms=0");

  const auto p = backends::parse_sim_decoder("ttft_ms=12.5,decode=1e3,prefill=1e6");  // any order
  EXPECT_DOUBLE_EQ(p.ttft_ms, 12.5);
  EXPECT_DOUBLE_EQ(p.decode_tok_s, 1000);
  EXPECT_DOUBLE_EQ(p.prefill_tok_s, 1e6);

  auto oa = open_decoder("openai:http://127.0.0.1:8000/v1/");
  ASSERT_NE(oa, nullptr);
  EXPECT_EQ(oa->prompt_form(), ports::PromptForm::text) << "the openai dialect's default";
  EXPECT_EQ(oa->describe(), "openai:http://127.0.0.1:8000/v1") << "the trailing slash is dropped";
  // tokenize once: the dialects of engines that take token ids get them by default, TGI never.
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=vllm")->prompt_form(), ports::PromptForm::ids);
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=sglang")->prompt_form(), ports::PromptForm::ids);
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=llamacpp")->prompt_form(), ports::PromptForm::ids);
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=tgi")->prompt_form(), ports::PromptForm::text);
  EXPECT_EQ(open_decoder("openai:http://h/v1,prompt=ids")->prompt_form(), ports::PromptForm::ids);
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=vllm,prompt=text")->prompt_form(), ports::PromptForm::text);
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=vllm")->describe(), "openai:http://h/v1,dialect=vllm");
  EXPECT_EQ(open_decoder("openai:http://h/v1,dialect=vllm,prompt=text")->describe(), "openai:http://h/v1,dialect=vllm,prompt=text");
  EXPECT_EQ(open_decoder("openai:http://h/v1,prompt=ids")->describe(), "openai:http://h/v1,prompt=ids");
  for (const char* bad : {"openai:http://h/v1,dialect=tgi,prompt=ids", "openai:http://h/v1,dialect=triton",
                          "openai:http://h/v1,prompt=tokens", "openai:http://h/v1,prompt=ids,prompt=text",
                          "openai:http://h/v1,dialect=vllm,dialect=vllm"})
    EXPECT_THROW((void)open_decoder(bad), std::invalid_argument) << bad;
  const auto q = backends::parse_openai_decoder("https://h.example/v1,model=microsoft/phi-4,timeout_ms=2500");
  EXPECT_EQ(q.base_url, "https://h.example/v1");
  EXPECT_EQ(q.model, "microsoft/phi-4");
  EXPECT_EQ(q.timeout, 2500ms);
  EXPECT_EQ(q.coalesce_window, backends::kDefaultCoalesceWindow);
  const auto c = backends::parse_openai_decoder("http://h/v1,coalesce_us=0");
  EXPECT_EQ(c.coalesce_window, std::chrono::microseconds(0)) << "0 turns the gathering window off";
  EXPECT_EQ(open_decoder("openai:http://h/v1,coalesce_us=2000")->describe(), "openai:http://h/v1,coalesce_us=2000");
}

// The decoder loop's gathering window (backends/curl_stream_loop.hpp): a lone stream, or streams
// too slow to gather two events a window, are never delayed.
TEST(DecoderSpec, TheLoopWaitsOnlyWhenWaitingGathersEvents) {
  const backends::CoalescePolicy policy;  // 5 ms, at least 2 events a window
  EXPECT_EQ(policy.window(1, 1e6).count(), 0) << "a lone stream, however fast";
  EXPECT_EQ(policy.window(256, 0).count(), 0) << "nothing comes: nothing to gather";
  EXPECT_EQ(policy.window(4, 200).count(), 0) << "4 streams of 50 tokens/s: 1 event a window";
  EXPECT_EQ(policy.window(8, 400).count(), 5000) << "8 streams of 50 tokens/s: 2 events a window";
  EXPECT_EQ(policy.window(256, 12800).count(), 5000);
  backends::CoalescePolicy off;
  off.max_window = std::chrono::microseconds(0);
  EXPECT_EQ(off.window(256, 12800).count(), 0);
}

TEST(DecoderSpec, BadFormsNameTheBadPart) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "unknown decoder ''"},
      {"None", "unknown decoder 'None'"},
      {"sim", "unknown decoder 'sim'"},
      {"sim:", "'' is not KEY=VALUE"},
      {"sim:prefill=1000", "'decode' is missing"},
      {"sim:decode=10", "'prefill' is missing"},
      {"sim:prefill=abc,decode=10", "'prefill=abc': 'abc' is not a number"},
      {"sim:prefill=10,decode=10x", "'10x' is not a number"},
      {"sim:prefill=0,decode=10", "prefill must be > 0"},
      {"sim:prefill=10,decode=-1", "decode must be > 0"},
      {"sim:prefill=10,decode=10,ttft_ms=-1", "ttft_ms must be >= 0"},
      {"sim:prefill=10,decode=10,ttft_ms=inf", "'inf' is not a number"},
      {"sim:prefill=10,decode=10,speed=3", "unknown parameter 'speed'"},
      {"sim:prefill=10,prefill=20,decode=1", "'prefill' given twice"},
      {"sim:prefill=10,,decode=1", "'' is not KEY=VALUE"},
      {"sim:prefill,decode=1", "'prefill' is not KEY=VALUE"},
      {"openai:", "'' is not an http:// or https:// URL"},
      {"openai:localhost:8000/v1", "'localhost:8000/v1' is not an http:// or https:// URL"},
      {"openai:http://", "is not a URL"},
      {"openai:http://h/v1,model=", "'model' is empty"},
      {"openai:http://h/v1,timeout_ms=0", "timeout_ms must be a positive integer"},
      {"openai:http://h/v1,key=secret", "unknown parameter 'key'"},
      {"openai:http://h/v1,coalesce_us=-1", "coalesce_us must be an integer from 0 to 100000"},
      {"openai:http://h/v1,coalesce_us=200000", "coalesce_us must be an integer from 0 to 100000"},
  };
  for (const auto& [spec, want] : bad) {
    try {
      (void)open_decoder(spec);
      ADD_FAILURE() << "'" << spec << "' was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << spec << " -> " << e.what();
    }
  }
}

// --- sim -------------------------------------------------------------------------------------

TEST(SimDecoder, WaitsTheModelledTimeWithoutTheCpu) {
  const backends::SimDecoder d({/*prefill*/ 10000, /*decode*/ 1000, /*ttft_ms*/ 5});
  DecodeRequest req;
  req.prompt_tokens = 200;  // 20 ms of prefill, + 5 ms
  req.max_tokens = 30;      // 30 ms of decode
  const std::int64_t cpu0 = thread_cpu_ns();
  const DecodeResult r = d.decode(req);
  const std::int64_t cpu = thread_cpu_ns() - cpu0;
  EXPECT_EQ(r.output_tokens, 30);
  EXPECT_GE(r.first_token - r.decode_start, 25 * kMs);
  EXPECT_GE(r.decode_end - r.first_token, 30 * kMs);
  EXPECT_LT(r.decode_end - r.decode_start, 500 * kMs);
  EXPECT_LT(cpu, 10 * kMs) << "it sleeps, it does not spin";
  // Nothing wanted: the prompt is still read, no token comes.
  req.max_tokens = 0;
  const DecodeResult none = d.decode(req);
  EXPECT_EQ(none.output_tokens, 0);
  EXPECT_EQ(none.first_token, 0);
  EXPECT_GE(none.decode_end - none.decode_start, 25 * kMs);
}

// The fake processor, plus what the decoder stage asks of a processor: the answer counted as one
// token per byte (so a 50-byte answer is 50 tokens), the prompt text, and count_text likewise
// with the one tokenizer the source names ("llama"; another name is no tokenizer it has).
class DecodingProcessor final : public Processor {
 public:
  ProcessResult process(const SourceRecord& s, const std::string& t) const override { return inner_.process(s, t); }
  ProcessResult process_for_decoder(const SourceRecord& s, const std::string& t, ports::PromptForm form) const override {
    ProcessResult r = process(s, t);
    r.encode_end = monotonic_ns();
    if (s.answer) r.answer_tokens = static_cast<std::int64_t>(s.answer->size());
    if (form != ports::PromptForm::none) r.prompt = "<prompt of " + s.id + ">";
    return r;
  }
  std::optional<std::int64_t> count_text(const std::string& tokenizer, std::string_view text) const override {
    if (tokenizer != "llama") return std::nullopt;
    return static_cast<std::int64_t>(text.size());
  }

 private:
  FunctionProcessor inner_ = testing::fake_processor();
};

std::shared_ptr<const SourceRecord> record_with(const std::string& id, std::optional<std::string> answer,
                                                std::optional<std::int64_t> max_tokens = std::nullopt) {
  auto r = std::make_shared<SourceRecord>(*parse_source_line(testing::source_line(id), 1));
  r->answer = std::move(answer);
  r->max_tokens = max_tokens;
  return r;
}

struct WorkerRun {
  std::vector<Record> records;
  DeadLetterSink dead;
  WorkerStats stats;
};

void run_worker(WorkerRun& out, std::vector<std::shared_ptr<const SourceRecord>> records,
                std::shared_ptr<const Decoder> decoder, int attempts = 3, std::size_t max_decodes = 0,
                std::shared_ptr<const cost::RequestPricer> pricer = nullptr) {
  FileSource source(std::move(records), {"llama"});
  DecodingProcessor proc;
  MemorySink sink;
  WorkerOptions o;
  o.pricer = std::move(pricer);
  o.decoder = std::move(decoder);
  o.decoder_retry.attempts = attempts;
  o.max_decodes = max_decodes;
  o.decoder_retry.sleep = [](std::chrono::microseconds) {};
  o.retry.sleep = [](std::chrono::microseconds) {};
  Worker worker(source, proc, sink, out.dead, o);
  out.stats = worker.run();
  out.records = sink.take();
  std::sort(out.records.begin(), out.records.end(), [](const Record& a, const Record& b) { return a.id < b.id; });
}

void expect_ordered(const Record& r) {
  EXPECT_LE(r.encode_end, r.decode_start) << r.id;
  EXPECT_LE(r.decode_start, r.first_token) << r.id;
  EXPECT_LE(r.first_token, r.decode_end) << r.id;
  EXPECT_LE(r.decode_end, r.publish_start) << r.id;
}

// The brief's figure: prefill=1e6, decode=1000 tok/s; an answer of 50 tokens takes 50 ms from the
// first token to the last (asserted loosely above: the machine is shared).
TEST(SimDecoder, TheWorkerStampsTheAnswersLengthAndTheModelledTime) {
  WorkerRun run;
  run_worker(run,
             {record_with("a-answer", std::string(50, 'y')), record_with("b-max-tokens", std::nullopt, 7),
              record_with("c-nothing", std::nullopt)},
             open_decoder("sim:prefill=1e6,decode=1000"));
  ASSERT_EQ(run.records.size(), 3u);
  EXPECT_EQ(run.dead.total(), 0u);
  const Record& a = run.records[0];
  EXPECT_EQ(a.output_tokens, 50);
  EXPECT_GE(a.decode_end - a.first_token, 45 * kMs);
  EXPECT_LE(a.decode_end - a.first_token, 200 * kMs);
  EXPECT_GT(a.decode_start, 0);
  expect_ordered(a);
  EXPECT_EQ(run.records[1].output_tokens, 7) << "no answer: the request's max_tokens";
  expect_ordered(run.records[1]);
  EXPECT_EQ(run.records[2].output_tokens, 0) << "neither: nothing to generate";
  EXPECT_EQ(run.records[2].first_token, 0);
  EXPECT_GT(run.records[2].decode_end, 0);
}

// Every request priced: E from the item's CPU time, D (without a profile) from its share of the
// engine's time, which for a generation alone is its whole decode; no price, no cost fields.
TEST(SimDecoder, AWorkerGivenPricesPricesEveryRecordFromWhatItMeasured) {
  cost::RequestPrices prices;
  prices.cpu_usd_per_s = 1;  // $ = seconds
  prices.gpu_usd_per_s = 1;
  prices.source = "test prices";
  const auto pricer = std::make_shared<const cost::RequestPricer>(prices);
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(50, 'y')), record_with("b", std::string(20, 'y'))},
             open_decoder("sim:prefill=1e6,decode=1000"), 3, 0, pricer);
  ASSERT_EQ(run.records.size(), 2u);
  for (const Record& r : run.records) {
    const double decode_s = double(r.decode_end - r.decode_start) / 1e9;
    EXPECT_GT(r.cost_e_usd, 0) << r.id;
    EXPECT_LT(r.cost_e_usd, decode_s) << r.id << ": the wait for the engine is no CPU time";
    EXPECT_GE(r.cost_d_usd, decode_s * 0.99) << r.id;
    EXPECT_LE(r.cost_d_usd, decode_s + 0.05) << r.id;
    EXPECT_EQ(r.cost_usd, r.cost_e_usd + r.cost_d_usd) << r.id;
    EXPECT_EQ(r.price_source, "test prices");
  }
  WorkerRun unpriced;
  run_worker(unpriced, {record_with("a", std::string(5, 'y'))}, open_decoder("sim:prefill=1e6,decode=1000"));
  ASSERT_EQ(unpriced.records.size(), 1u);
  EXPECT_EQ(unpriced.records[0].cost_usd, 0.0);
  EXPECT_EQ(unpriced.records[0].price_source, "");
}

TEST(SimDecoder, NoneLeavesTheRecordWithoutDecoderStamps) {
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(50, 'y'))}, nullptr);
  ASSERT_EQ(run.records.size(), 1u);
  const Record& r = run.records[0];
  EXPECT_EQ(r.decode_start, 0);
  EXPECT_EQ(r.first_token, 0);
  EXPECT_EQ(r.decode_end, 0);
  EXPECT_EQ(r.output_tokens, 0);
}

// --- the port's defaults and the worker's one decode path -----------------------------------

// Implements only start(): each generation ends 3 ms later on a thread of its own, and the decoder
// notes the most generations it ever had in flight at once.
class LateDecoder final : public Decoder {
 public:
  ~LateDecoder() override {
    for (auto& t : threads_) t.join();
  }
  [[nodiscard]] std::string describe() const override { return "late"; }
  [[nodiscard]] std::shared_ptr<DecodeTicket> start(const DecodeRequest& request,
                                                    std::shared_ptr<DecodeCallbacks> callbacks) const override {
    const int now = ++in_flight_;
    int seen = most_.load();
    while (now > seen && !most_.compare_exchange_weak(seen, now)) {
    }
    const std::int64_t tokens = request.max_tokens;
    std::lock_guard lock(mutex_);
    threads_.emplace_back([this, tokens, callbacks] {
      DecodeResult r;
      r.decode_start = monotonic_ns();
      std::this_thread::sleep_for(3ms);
      r.first_token = r.decode_end = monotonic_ns();
      r.output_tokens = tokens;
      r.text = "late";
      r.finish_reason = "stop";
      --in_flight_;
      callbacks->on_done(std::move(r));
    });
    return nullptr;
  }
  [[nodiscard]] int most_in_flight() const { return most_.load(); }

 private:
  mutable std::atomic<int> in_flight_{0}, most_{0};
  mutable std::mutex mutex_;
  mutable std::vector<std::thread> threads_;
};

class NeitherDecoder final : public Decoder {
 public:
  [[nodiscard]] std::string describe() const override { return "neither"; }
};

TEST(DecoderPort, AStartOnlyDecoderGetsADecodeThatWaitsForTheEnd) {
  const LateDecoder d;
  DecodeRequest req;
  req.max_tokens = 4;
  const DecodeResult r = d.decode(req);
  EXPECT_EQ(r.text, "late");
  EXPECT_EQ(r.output_tokens, 4);
  EXPECT_GE(r.decode_end - r.decode_start, 2 * kMs);
}

TEST(DecoderPort, ADecoderThatImplementsNeitherFailsClearlyInsteadOfRecursing) {
  const NeitherDecoder d;
  try {
    (void)d.decode(DecodeRequest{});
    ADD_FAILURE() << "an answer from nothing";
  } catch (const DecoderError& e) {
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("implements neither"), std::string::npos) << e.what();
  }
}

// --max-decodes 0: the worker starts every generation through start() and waits for its end, so
// an asynchronous decoder still runs one item at a time and each record is published after its
// generation ended, before the next one starts.
TEST(DecoderPort, WithoutMaxDecodesTheWorkerWaitsForEachGeneration) {
  auto d = std::make_shared<LateDecoder>();
  WorkerRun run;
  run_worker(run,
             {record_with("a", std::string(5, 'y')), record_with("b", std::string(6, 'y')),
              record_with("c", std::string(7, 'y')), record_with("d", std::nullopt, 2)},
             d);
  ASSERT_EQ(run.records.size(), 4u);
  EXPECT_EQ(run.dead.total(), 0u);
  EXPECT_EQ(d->most_in_flight(), 1) << "one generation at a time";
  for (std::size_t k = 0; k < run.records.size(); ++k) {
    expect_ordered(run.records[k]);
    if (k > 0) {
      EXPECT_LE(run.records[k - 1].publish_start, run.records[k].decode_start) << run.records[k].id;
    }
  }
  EXPECT_EQ(run.records[0].output_tokens, 5);
  EXPECT_EQ(run.records[3].output_tokens, 2);
  EXPECT_EQ(run.records[0].finish_reason, "stop");
}

// --- openai ----------------------------------------------------------------------------------

using FakeOpenAi = overhead::test_support::FakeOpenAi;

TEST(OpenAiDecoder, MeasuresTheStreamAtTheServersRate) {
  FakeOpenAi server;
  const auto d = open_decoder("openai:" + server.url() + ",model=fake-model");
  DecodeRequest req;
  req.prompt = "<|user|>hi<|assistant|>";
  req.prompt_tokens = 3;
  req.max_tokens = 20;
  req.tokenizer = "phi-4";
  const DecodeResult r = d->decode(req);
  EXPECT_EQ(r.output_tokens, 20) << "from the usage chunk";
  EXPECT_GE(r.decode_end - r.first_token, 19 * 5 * kMs / 2) << "19 gaps of 5 ms between the first token and the last (half: a late wake-up for the first shortens the span seen)";
  EXPECT_LT(r.decode_end - r.first_token, 5000 * kMs);
  EXPECT_LE(r.decode_start, r.first_token);
  EXPECT_EQ(r.text.substr(0, 6), "t0 t1 ");
  std::lock_guard lock(server.mutex);
  EXPECT_EQ(server.last_body.value("prompt", ""), "<|user|>hi<|assistant|>");
  EXPECT_EQ(server.last_body.value("model", ""), "fake-model");
  EXPECT_EQ(server.last_body.value("max_tokens", 0), 20);
  EXPECT_EQ(server.last_body.value("stream", false), true);
  EXPECT_EQ(server.last_body["stream_options"].value("include_usage", false), true);
}

// Through the worker: the prompt it sends is the processor's, the model is the item's tokenizer,
// and without a usage chunk the worker counts the answer's text with the item's tokenizer.
TEST(OpenAiDecoder, TheWorkerRecordsTheStreamAndCountsTheTextWithoutUsage) {
  FakeOpenAi server;
  server.usage = false;
  server.tokens = 10;
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(10, 'y'))}, open_decoder("openai:" + server.url()));
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.dead.total(), 0u);
  const Record& r = run.records[0];
  EXPECT_EQ(r.output_tokens, 30) << "count_text of \"t0 t1 ... t9 \" (one per byte here)";
  // The engine spaces its 10 tokens 5 ms apart; the first is stamped when it arrives, not with the
  // last. A late wake-up for the first token shortens the span the worker sees, so half of it.
  EXPECT_GE(r.decode_end - r.first_token, 9 * 5 * kMs / 2);
  expect_ordered(r);
  std::lock_guard lock(server.mutex);
  EXPECT_EQ(server.last_body.value("prompt", ""), "<prompt of a>");
  EXPECT_EQ(server.last_body.value("model", ""), "llama");
  EXPECT_EQ(server.last_body.value("max_tokens", 0), 10) << "the answer's length";
}

// The same through the asynchronous stage (--max-decodes > 0, as the gateway runs it): the item's
// tokenizer names the model and counts the text (it was read after the record took it, so the
// engine was sent "model": "" and the answer counted 0 tokens).
TEST(OpenAiDecoder, TheAsynchronousStageSendsAndCountsWithTheItemsTokenizer) {
  FakeOpenAi server;
  server.usage = false;
  server.tokens = 10;
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(10, 'y'))}, open_decoder("openai:" + server.url()), 3, 4);
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.dead.total(), 0u);
  EXPECT_EQ(run.records[0].output_tokens, 30) << "count_text of \"t0 t1 ... t9 \" with the item's tokenizer";
  EXPECT_EQ(run.records[0].tokenizer, "llama");
  std::lock_guard lock(server.mutex);
  EXPECT_EQ(server.last_body.value("model", ""), "llama");
}

TEST(OpenAiDecoder, AServerErrorIsRetriedThenACountedDeadLetter) {
  FakeOpenAi server;
  server.status = 500;
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(5, 'y')), record_with("b", std::string(5, 'y'))},
             open_decoder("openai:" + server.url()), 3);
  EXPECT_TRUE(run.records.empty());
  EXPECT_EQ(run.stats.items, 2u);
  EXPECT_EQ(run.stats.bad_input, 2u) << "each item settled as a dead letter, none lost";
  EXPECT_EQ(run.dead.counts().at("decode_failed"), 2u);
  EXPECT_EQ(server.hits.load(), 6) << "500 is transient: 3 tries per item";
  const auto letters = run.dead.letters();
  ASSERT_EQ(letters.size(), 2u);
  EXPECT_NE(letters[0].reason.find("HTTP 500"), std::string::npos) << letters[0].reason;
  EXPECT_FALSE(letters[0].payload.empty()) << "the letter carries the item";
}

// A 400 blames the request: never retried, an engine_refused letter in the engine's words, on
// both paths (a 401 is the engine's credentials, the operator's: decode_failed, also permanent).
TEST(OpenAiDecoder, ABadRequestIsNotRetried) {
  for (const std::size_t max_decodes : {std::size_t{0}, std::size_t{4}}) {
    FakeOpenAi server;
    server.status = 400;
    WorkerRun run;
    run_worker(run, {record_with("a", std::string(5, 'y'))}, open_decoder("openai:" + server.url()), 3, max_decodes);
    EXPECT_EQ(run.dead.counts().at("engine_refused"), 1u) << max_decodes;
    EXPECT_EQ(server.hits.load(), 1) << "400 is permanent";
    EXPECT_EQ(run.dead.letters()[0].reason, "HTTP 400: boom");
  }
  FakeOpenAi server;
  server.status = 401;
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(5, 'y'))}, open_decoder("openai:" + server.url()), 3);
  EXPECT_EQ(run.dead.counts().at("decode_failed"), 1u);
  EXPECT_EQ(server.hits.load(), 1) << "401 is permanent";
  EXPECT_NE(run.dead.letters()[0].reason.find("(permanent)"), std::string::npos);
}

TEST(OpenAiDecoder, ARefusedConnectionIsATransientErrorThenACountedDeadLetter) {
  std::string url;
  {
    FakeOpenAi gone;  // a port that was free a moment ago and has nobody listening now
    url = gone.url();
  }
  const auto d = open_decoder("openai:" + url);
  DecodeRequest req;
  req.prompt = "x";
  try {
    (void)d->decode(req);
    ADD_FAILURE() << "no server, yet an answer";
  } catch (const DecoderError& e) {
    EXPECT_TRUE(e.retryable()) << e.what();
  }
  WorkerRun run;
  run_worker(run, {record_with("a", std::string(5, 'y'))}, d, 2);
  EXPECT_TRUE(run.records.empty());
  EXPECT_EQ(run.stats.bad_input, 1u);
  EXPECT_EQ(run.dead.counts().at("decode_failed"), 1u);
  EXPECT_NE(run.dead.letters()[0].reason.find("after 2 tries"), std::string::npos) << run.dead.letters()[0].reason;
}

}  // namespace
}  // namespace overhead::pipe
