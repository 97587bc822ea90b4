// Shared by the fault tests of the shared-backend deployment (Redis restart, PostgreSQL outage,
// poison messages, bad URLs): real `overhead` processes started and stopped by pid, private
// servers started with the repo's own service scripts (so a test may stop its server without
// touching the shared CTest fixtures), env files, process memory, and the store's rows.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "service_env.hpp"

namespace overhead::fault_test {

// The env files and fresh names of tests/pipe/contract/service_env.hpp.
using test_services::env_file_value;
using test_services::service_env;
using test_services::unique_name;

// One `overhead` process, its stdout and stderr in `log`.
class Child {
 public:
  // Starts build/overhead with `args`; throws when it cannot be started.
  Child(const std::vector<std::string>& args, std::string log);
  ~Child();  // SIGKILLs the process if it still runs (a failed test leaves nothing behind)
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& log() const { return log_; }
  // Waits up to `limit` for the exit; returns the exit code, or -1 on a timeout or a signal.
  int wait(std::chrono::milliseconds limit);
  bool running();
  void signal(int sig);
  std::string output() const;  // the log's text so far

 private:
  pid_t pid_ = -1;
  std::string log_;
  bool reaped_ = false;
  int status_ = 0;
};

// A private server of scripts/services/NAME.sh in its own folder: started here, `clean`ed (stopped
// and removed) when the object goes.
class PrivateService {
 public:
  PrivateService(std::string name, std::string dir);  // starts it; throws when the script fails
  ~PrivateService();
  PrivateService(const PrivateService&) = delete;
  PrivateService& operator=(const PrivateService&) = delete;

  void stop();   // the script's stop: keeps data and port
  void start();  // the script's start: same data, same port
  std::string env(const std::string& key) const;

 private:
  void script(const std::string& command);
  std::string name_, dir_;
};

// Resident set size of a process in KiB (/proc/PID/status VmRSS); 0 once it is gone.
std::size_t rss_kib(pid_t pid);
// Its anonymous resident memory in KiB (/proc/PID/status RssAnon): the heap and zeroed tables, what
// buffering would grow, without the file pages of the mapped tokenizer caches, which fault in as
// the vocabulary is first used and can be evicted at any time; 0 once it is gone.
std::size_t anon_rss_kib(pid_t pid);

// Runs build/overhead with `args` (shell words) and returns its exit code; stdout and stderr
// together in `output`.
int run_overhead(const std::string& args, std::string& output);

// (experiment_tokenizer, id) -> how many rows of `experiment` the store at `url` holds for it,
// and the rows whose stamps are missing.
struct StoreRows {
  std::map<std::pair<std::string, std::string>, int> keys;
  std::size_t rows = 0;
  std::size_t without_publish_acked = 0;
  std::size_t without_input_deleted = 0;
};
StoreRows store_rows(const std::string& url, const std::string& experiment);

// The (experiment#tokenizer, id) keys that `overhead enqueue --limit N --tokenizers T` produces
// from the bundled MT-Bench records.
std::vector<std::pair<std::string, std::string>> expected_keys(const std::string& experiment,
                                                               const std::vector<std::string>& tokenizers,
                                                               std::size_t limit);

// Polls `done` every 100 ms until it is true or `limit` passed; returns its last value.
template <class Fn>
bool wait_for(std::chrono::milliseconds limit, Fn&& done);

}  // namespace overhead::fault_test

#include <thread>

namespace overhead::fault_test {
template <class Fn>
bool wait_for(std::chrono::milliseconds limit, Fn&& done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}
}  // namespace overhead::fault_test
