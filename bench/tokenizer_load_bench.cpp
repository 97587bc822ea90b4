// Cold start of the seed tokenizers: Tokenizer::load from tokenizer.json (no cache) and from the
// compiled cache (tokenizer_cache.hpp), as Google Benchmark cases (CPU and wall time per load).
// Before the cases it prints the resident memory one loaded tokenizer adds to a fresh process
// (measured in a forked child per tokenizer and mode, so no allocator reuse hides any of it).
#include <benchmark/benchmark.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tok/tokenizer.hpp"

namespace {

using overhead::tok::CacheStatus;
using overhead::tok::LoadOptions;
using overhead::tok::Tokenizer;

const char* const kSeeds[] = {"phi-4", "gemma-2-27b-it", "llama-3.3-70b-instruct"};

std::string cache_dir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/overhead-load-bench-XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (!made) std::abort();
    return std::string(made);
  }();
  return dir;
}

long rss_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// RSS added by one load in a fresh child process, in KB (-1 on failure).
long rss_of_load(const std::string& name, const LoadOptions& options) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const long before = rss_kb();
    auto tok = Tokenizer::load(name, options);
    long delta = rss_kb() - before;
    benchmark::DoNotOptimize(tok.get());
    if (::write(fds[1], &delta, sizeof delta) != sizeof delta) ::_exit(1);
    ::_exit(0);
  }
  ::close(fds[1]);
  long delta = -1;
  if (::read(fds[0], &delta, sizeof delta) != sizeof delta) delta = -1;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return delta;
}

void load(benchmark::State& state, const std::string& name, bool cached) {
  LoadOptions options;
  options.cache_dir = cached ? cache_dir() : "";
  if (cached) Tokenizer::load(name, options);  // writes the cache file once
  for (auto _ : state) {
    CacheStatus status;
    auto tok = Tokenizer::load(name, options, &status);
    if (cached && status.kind != CacheStatus::Kind::kHit) state.SkipWithError(("cache not used: " + status.reason).c_str());
    benchmark::DoNotOptimize(tok.get());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("RSS added by one loaded tokenizer (fresh process):\n%-24s %12s %12s\n", "tokenizer", "json MB", "cached MB");
  for (const char* name : kSeeds) {
    LoadOptions json;
    json.cache_dir = "";
    LoadOptions cached;
    cached.cache_dir = cache_dir();
    rss_of_load(name, cached);  // builds the cache file in a child, so this process stays unloaded
    std::printf("%-24s %12.1f %12.1f\n", name, rss_of_load(name, json) / 1024.0, rss_of_load(name, cached) / 1024.0);
  }
  std::fflush(stdout);
  for (const char* name : kSeeds) {
    benchmark::RegisterBenchmark((std::string("BM_LoadJson/") + name).c_str(),
                                 [name](benchmark::State& s) { load(s, name, false); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("BM_LoadCached/") + name).c_str(),
                                 [name](benchmark::State& s) { load(s, name, true); })
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove_all(cache_dir(), ec);
  return 0;
}
