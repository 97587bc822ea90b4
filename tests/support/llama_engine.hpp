// LlamaEngine: the real engine of the tests (tests/engine/llama_server.mjs: llama.cpp through
// node-llama-cpp, a tiny random-weight model with the Llama-3 tokenizer) started as a child
// process on a free loopback port, for C++ tests. The paths come from the environment CTest sets
// for tests that require the fixtures llama_engine and llama_model (tests/CMakeLists.txt:
// OVERHEAD_LLAMA_ENGINE_ENV): LLAMA_ENGINE_SERVER, LLAMA_ENGINE_MODEL, LLAMA_ENGINE_NODE_MODULES.
//
//   testing::LlamaEngine engine({.sequences = 8});
//   engine.base_url()  // http://127.0.0.1:PORT/v1, serving the model names in options.model_names
#pragma once

#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace overhead::testing {

struct LlamaEngineOptions {
  int sequences = 8;
  int context = 2048;  // per sequence
  int threads = 1;
  std::vector<std::string> model_names = {"tiny-llama3"};
};

class LlamaEngine {
 public:
  explicit LlamaEngine(const LlamaEngineOptions& o = {}) {
    const char* server = std::getenv("LLAMA_ENGINE_SERVER");
    const char* model = std::getenv("LLAMA_ENGINE_MODEL");
    if (!server || !model) throw std::runtime_error("LlamaEngine: LLAMA_ENGINE_SERVER / LLAMA_ENGINE_MODEL are not set");
    std::vector<std::string> args = {"node", server, "--model", model, "--port", "0",
                                     "--sequences", std::to_string(o.sequences), "--context", std::to_string(o.context),
                                     "--threads", std::to_string(o.threads)};
    for (const auto& n : o.model_names) {
      args.push_back("--model-name");
      args.push_back(n);
    }
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("LlamaEngine: pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawnp(&pid_, "node", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    if (rc != 0) {
      close(out[0]);
      throw std::runtime_error("LlamaEngine: cannot start node");
    }
    stdout_ = out[0];
    // Wait for "llama_server: listening on http://127.0.0.1:PORT" (loading takes a few seconds).
    std::string seen;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (seen.find('\n', seen.find("listening on ")) == std::string::npos) {
      pollfd p{stdout_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) stop_and_throw("did not start in 120 s");
      char buf[512];
      const ssize_t n = read(stdout_, buf, sizeof buf);
      if (n <= 0) stop_and_throw("exited before listening");
      seen.append(buf, static_cast<std::size_t>(n));
    }
    const std::size_t at = seen.find("listening on ") + 13;
    url_ = seen.substr(at, seen.find('\n', at) - at);
  }
  ~LlamaEngine() { stop(); }
  LlamaEngine(const LlamaEngine&) = delete;
  LlamaEngine& operator=(const LlamaEngine&) = delete;

  [[nodiscard]] const std::string& url() const { return url_; }  // http://127.0.0.1:PORT
  [[nodiscard]] std::string base_url() const { return url_ + "/v1"; }
  [[nodiscard]] int port() const { return std::stoi(url_.substr(url_.rfind(':') + 1)); }

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) break;
      if (i == 99) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
      }
      usleep(50'000);
    }
    pid_ = -1;
    close(stdout_);
  }

 private:
  [[noreturn]] void stop_and_throw(const std::string& why) {
    stop();
    throw std::runtime_error("LlamaEngine: llama_server " + why);
  }
  pid_t pid_ = -1;
  int stdout_ = -1;
  std::string url_;
};

}  // namespace overhead::testing
