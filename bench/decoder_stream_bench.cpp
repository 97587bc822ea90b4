// The openai decoder's client CPU per generated token (issue 22's target: <= 5 us), and N
// concurrent streams on its one thread, against a loopback server that streams vLLM-shaped
// text_completion chunks (one event per token, each its own write, `gap_us` apart; then the usage
// chunk and [DONE]).
//   OpenAiStreams/streams:S/tokens:T/gap_us:G   S generations of T tokens at once, waited for
//       cpu_ns_per_token   CLOCK_PROCESS_CPUTIME_ID of this process (the decoder's loop thread, the
//                          caller's start() calls, the kernel's loopback TCP) / tokens received
//       allocs_per_gen     operator new calls per generation (C++ only; libcurl's mallocs are not
//                          counted): the same for 32 and 256 tokens means none per token
//   EventParse/*           one chunk's fields read: simdjson On-Demand (the decoder) against a
//                          nlohmann DOM (the decoder before issue 22)
// Whose CPU: the server is a forked child (before any thread of ours), so none of its CPU is ours.
// gap_us 0 is the worst case for the client (the server writes as fast as it can, TCP may
// coalesce events); gap_us 20000 is a 50 token/s engine, where each token is one wake-up.
//
// Run: build/bench/overhead_decoder_stream_bench
#include <benchmark/benchmark.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "alloc_counter.hpp"
#include "backends/openai_decoder.hpp"
#include "backends/openai_stream_event.hpp"
#include "scripted_openai_server.hpp"

namespace {

using namespace overhead;

std::string chunk(const std::string& text) {
  const nlohmann::json c = {{"id", "cmpl-5f0e1d2c3b4a69788796a5b4c3d2e1f0"}, {"object", "text_completion"},
                            {"created", 1733300000}, {"model", "meta-llama/Llama-3.3-70B-Instruct"},
                            {"choices", {{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", nullptr},
                                          {"stop_reason", nullptr}}}},
                            {"usage", nullptr}};
  return "data: " + c.dump() + "\n\n";
}

// The streaming server, in a child process: the body's max_tokens events, `user` = "gap_us=G".
// (The tests' scripted server: plain sockets, a deep accept queue, one send() per event.)
pid_t g_server = -1;
int g_port = 0;

void start_server() {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    close(fds[0]);
    testing::ScriptedOpenAiServer server;
    const std::string event = chunk(" token");
    server.script = [&event](const std::string& body, std::chrono::microseconds& gap) {
      const auto j = nlohmann::json::parse(body);
      const int tokens = j.value("max_tokens", 16);
      gap = std::chrono::microseconds(std::atoi(j.value("user", "gap_us=0").c_str() + 7));
      std::vector<std::string> out(static_cast<std::size_t>(tokens), event);
      out.push_back("data: {\"id\":\"cmpl-5f0e\",\"object\":\"text_completion\",\"created\":1733300000,"
                    "\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":" +
                    std::to_string(tokens) + ",\"total_tokens\":" + std::to_string(tokens + 100) + "}}\n\n");
      out.push_back("data: [DONE]\n\n");
      return out;
    };
    const std::string url = server.url();
    const int port = std::atoi(url.c_str() + url.rfind(':') + 1);
    if (write(fds[1], &port, sizeof port) != static_cast<ssize_t>(sizeof port)) _exit(1);
    close(fds[1]);
    pause();
    _exit(0);
  }
  close(fds[1]);
  if (read(fds[0], &g_port, sizeof g_port) != static_cast<ssize_t>(sizeof g_port) || g_port <= 0)
    throw std::runtime_error("loopback server did not start");
  close(fds[0]);
  g_server = pid;
  std::atexit([] {
    kill(g_server, SIGKILL);
    waitpid(g_server, nullptr, 0);
  });
}

std::int64_t process_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

// Counts the generations still running; the caller waits for zero.
class Countdown {
 public:
  void reset(int n) {
    std::lock_guard lock(m_);
    left_ = n;
    tokens_ = 0;
    errors_ = 0;
  }
  void done(std::int64_t tokens, bool error) {
    std::lock_guard lock(m_);
    tokens_ += tokens;
    errors_ += error;
    if (--left_ == 0) cv_.notify_all();
  }
  void wait() {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return left_ == 0; });
  }
  std::int64_t tokens() const { return tokens_; }
  int errors() const { return errors_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int left_ = 0;
  std::int64_t tokens_ = 0;
  int errors_ = 0;
};

class CountingCallbacks final : public ports::DecodeCallbacks {
 public:
  explicit CountingCallbacks(Countdown& c) : countdown_(c) {}
  void on_text(std::string_view text, std::int64_t) override { bytes_ += text.size(); }
  void on_done(ports::DecodeResult r) override { countdown_.done(r.output_tokens, false); }
  void on_error(const ports::DecoderError&) override { countdown_.done(0, true); }

 private:
  Countdown& countdown_;
  std::size_t bytes_ = 0;
};

void OpenAiStreams(benchmark::State& state) {
  const int streams = static_cast<int>(state.range(0));
  const int tokens = static_cast<int>(state.range(1));
  const int gap_us = static_cast<int>(state.range(2));
  const backends::OpenAiDecoder decoder(
      backends::parse_openai_decoder("http://127.0.0.1:" + std::to_string(g_port) + "/v1,model=bench"));
  ports::SamplingParams sampling;
  sampling.user = "gap_us=" + std::to_string(gap_us);
  sampling.temperature = 0.0;
  const std::string prompt(2000, 'p');
  ports::DecodeRequest request;
  request.prompt = prompt;
  request.max_tokens = tokens;
  request.tokenizer = "bench";
  request.sampling = &sampling;
  request.stream_text = true;
  Countdown countdown;
  std::vector<std::shared_ptr<ports::DecodeTicket>> tickets;
  tickets.reserve(static_cast<std::size_t>(streams));
  std::int64_t cpu = 0, received = 0;
  std::uint64_t news = 0;
  int errors = 0;
  for (auto _ : state) {
    countdown.reset(streams);
    tickets.clear();
    const std::int64_t cpu0 = process_cpu_ns();
    const std::uint64_t news0 = bench::operator_new_calls();
    for (int i = 0; i < streams; ++i) tickets.push_back(decoder.start(request, std::make_shared<CountingCallbacks>(countdown)));
    countdown.wait();
    cpu += process_cpu_ns() - cpu0;
    news += bench::operator_new_calls() - news0;
    received += countdown.tokens();
    errors += countdown.errors();
  }
  if (errors) state.SkipWithError("a generation failed");
  state.counters["cpu_ns_per_token"] = double(cpu) / double(std::max<std::int64_t>(received, 1));
  state.counters["allocs_per_gen"] = double(news) / double(state.iterations() * streams);
  state.counters["tokens_per_s"] = benchmark::Counter(double(received), benchmark::Counter::kIsRate);
}
BENCHMARK(OpenAiStreams)
    ->ArgNames({"streams", "tokens", "gap_us"})
    ->Args({1, 256, 0})
    ->Args({1, 32, 0})
    ->Args({16, 256, 0})
    ->Args({256, 256, 0})
    ->Args({1, 100, 10000})
    ->Args({16, 100, 10000})
    ->Args({256, 100, 10000})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void EventParse_OnDemand(benchmark::State& state) {
  std::string event = chunk(" token").substr(6);
  event.resize(event.size() - 2);
  const std::size_t size = event.size();
  event.reserve(size + backends::CompletionEventParser::kPadding);
  backends::CompletionEventParser parser;
  backends::CompletionEvent ev;
  std::string why;
  for (auto _ : state) {
    if (!parser.parse(event.data(), size, event.capacity(), ev, why)) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(ev.text.data());
  }
}
BENCHMARK(EventParse_OnDemand);

void EventParse_NlohmannDom(benchmark::State& state) {
  std::string event = chunk(" token").substr(6);
  event.resize(event.size() - 2);
  for (auto _ : state) {
    const auto j = nlohmann::json::parse(event, nullptr, false);
    benchmark::DoNotOptimize(j["choices"][0]["text"].get_ref<const std::string&>().data());
  }
}
BENCHMARK(EventParse_NlohmannDom);

}  // namespace

int main(int argc, char** argv) {
  start_server();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
