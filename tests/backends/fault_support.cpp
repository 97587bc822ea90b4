#include "fault_support.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "backends/open.hpp"
#include "pipe/dead_letter.hpp"
#include "pipe/source.hpp"
#include "ports/store.hpp"

extern char** environ;

namespace overhead::fault_test {

Child::Child(const std::vector<std::string>& args, std::string log) : log_(std::move(log)) {
  std::vector<std::string> argv{OVERHEAD_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  const int rc = posix_spawn(&pid_, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error(std::string("cannot start ") + OVERHEAD_BINARY);
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
}

bool Child::running() {
  if (reaped_) return false;
  const pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) reaped_ = true;
  return !reaped_;
}

int Child::wait(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

void Child::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

std::string Child::output() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

PrivateService::PrivateService(std::string name, std::string dir) : name_(std::move(name)), dir_(std::move(dir)) {
  script("start");
}

PrivateService::~PrivateService() {
  const std::string cmd = std::string(OVERHEAD_SOURCE_DIR) + "/scripts/services/" + name_ + ".sh clean '" + dir_ + "' >/dev/null 2>&1";
  (void)std::system(cmd.c_str());
}

void PrivateService::script(const std::string& command) {
  const std::string cmd =
      std::string(OVERHEAD_SOURCE_DIR) + "/scripts/services/" + name_ + ".sh " + command + " '" + dir_ + "' >/dev/null";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error(name_ + ".sh " + command + " " + dir_ + " failed");
}

void PrivateService::stop() { script("stop"); }
void PrivateService::start() { script("start"); }
std::string PrivateService::env(const std::string& key) const { return env_file_value(dir_ + "/" + name_ + ".env", key); }

namespace {
std::size_t status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with(field)) return std::stoul(line.substr(field.size()));
  return 0;
}
}  // namespace

std::size_t rss_kib(pid_t pid) { return status_kib(pid, "VmRSS:"); }
std::size_t anon_rss_kib(pid_t pid) { return status_kib(pid, "RssAnon:"); }

int run_overhead(const std::string& args, std::string& output) {
  const std::string cmd = std::string(OVERHEAD_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed");
  output.clear();
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) output += buf.data();
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

StoreRows store_rows(const std::string& url, const std::string& experiment) {
  StoreRows out;
  auto store = backends::open_store(url);
  store->scan(experiment, [&](const ports::Record& r) {
    ++out.keys[{r.experiment_tokenizer, r.id}];
    ++out.rows;
    if (r.publish_acked == 0) ++out.without_publish_acked;
    if (r.input_deleted == 0) ++out.without_input_deleted;
  });
  return out;
}

std::vector<std::pair<std::string, std::string>> expected_keys(const std::string& experiment,
                                                               const std::vector<std::string>& tokenizers,
                                                               std::size_t limit) {
  pipe::DeadLetterSink dead;
  const auto records = pipe::load_source_records(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz", limit, dead);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& t : tokenizers)
    for (const auto& r : records) out.emplace_back(experiment + "#" + t, r->id);
  return out;
}

}  // namespace overhead::fault_test
