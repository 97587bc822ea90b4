// `overhead lambda` against a fake Lambda Runtime API on loopback (no real part can stand in for
// it here): the test serves events in the documented SQS shape from GET invocation/next, the
// binary runs as Lambda would run its bootstrap (AWS_LAMBDA_RUNTIME_API=127.0.0.1:PORT), and the
// test checks what it posted back (response, invocation error, init error) and what landed in the
// store (a SQLite file).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "loopback_server.hpp"
#include "ports/record.hpp"
#include "ports/record_codec.hpp"
#include "ports/store.hpp"

namespace overhead::aws {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

// What the runtime posted for one invocation.
struct Posted {
  std::string kind;  // "response" or "error"
  std::string body;
  std::string error_type_header;
};

// The Runtime API's side of the documented protocol, with the events the test queues.
class FakeRuntimeApi {
 public:
  FakeRuntimeApi() {
    server_.http().Get("/2018-06-01/runtime/invocation/next", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock lock(m_);
      // Like Lambda, hold the call until there is an event (bounded, so a broken test ends).
      if (!cv_.wait_for(lock, 20s, [&] { return !events_.empty(); })) {
        res.status = 500;
        return;
      }
      auto [id, body] = events_.front();
      events_.pop_front();
      res.set_header("Lambda-Runtime-Aws-Request-Id", id);
      res.set_header("Lambda-Runtime-Deadline-Ms", std::to_string(now_ms() + 30000));
      res.set_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:consumer");
      res.set_header("Lambda-Runtime-Trace-Id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1");
      res.set_content(body, "application/json");
    });
    // The id is matched whole (httplib decodes the path first), so an id holding '/' is seen as sent.
    server_.http().Post(R"(/2018-06-01/runtime/invocation/(.+)/(response|error))",
                        [this](const httplib::Request& req, httplib::Response& res) {
                          std::lock_guard lock(m_);
                          posted_[req.matches[1]] = Posted{req.matches[2], req.body,
                                                           req.get_header_value("Lambda-Runtime-Function-Error-Type")};
                          res.status = 202;
                          res.set_content(R"({"status":"OK"})", "application/json");
                        });
    server_.http().Post("/2018-06-01/runtime/init/error", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(m_);
      init_error_ = req.body;
      init_error_type_ = req.get_header_value("Lambda-Runtime-Function-Error-Type");
      res.status = 202;
    });
    server_.start();
  }
  ~FakeRuntimeApi() {
    {
      std::lock_guard lock(m_);
      events_.clear();
    }
    server_.stop();
  }
  void queue(const std::string& request_id, const std::string& event) {
    std::lock_guard lock(m_);
    events_.emplace_back(request_id, event);
    cv_.notify_all();
  }
  std::string api() const { return "127.0.0.1:" + std::to_string(server_.port()); }
  std::map<std::string, Posted> posted() {
    std::lock_guard lock(m_);
    return posted_;
  }
  // Waits until the runtime posted for `request_id` (false after `limit`).
  bool wait_posted(const std::string& request_id, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      {
        std::lock_guard lock(m_);
        if (posted_.count(request_id)) return true;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }
  std::string init_error() {
    std::lock_guard lock(m_);
    return init_error_;
  }
  std::string init_error_type() {
    std::lock_guard lock(m_);
    return init_error_type_;
  }

 private:
  static std::int64_t now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  testing::LoopbackServer server_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::pair<std::string, std::string>> events_;
  std::map<std::string, Posted> posted_;
  std::string init_error_, init_error_type_;
};

// The environment the child gets: ours, with `set` replacing (or adding) variables and `unset`
// removing them. Built in the parent, because the child runs no code of ours before exec: a
// forked child of this many-threaded test that allocated (setenv, std::string) could block
// forever on a lock another thread held at the fork (the likely cause of one run under ASan that
// reached the 60 s limit).
std::vector<std::string> child_environment(const std::map<std::string, std::string>& set,
                                           const std::vector<std::string>& unset) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (set.count(name) || std::find(unset.begin(), unset.end(), name) != unset.end()) continue;
    env.push_back(entry);
  }
  for (const auto& [name, value] : set) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts `args` (args[0] the program) with `env`; returns the child's pid.
pid_t spawn(std::vector<std::string> args, std::vector<std::string> env) {
  auto argv = c_strings(args);
  auto envp = c_strings(env);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data());
  if (rc != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(rc));
  return pid;
}

// Runs `overhead lambda ARGS` as Lambda runs a bootstrap; returns its exit status (-1: killed
// after the time limit).
int run_lambda(const std::string& api, const std::vector<std::string>& args, const std::string& store_env = "") {
  std::map<std::string, std::string> set = {{"AWS_LAMBDA_RUNTIME_API", api}};
  std::vector<std::string> unset;
  if (store_env.empty()) unset.push_back("OVERHEAD_STORE");
  else set["OVERHEAD_STORE"] = store_env;
  // OVERHEAD_LAMBDA_BOOTSTRAP: the `bootstrap` of an unpacked lambda zip (the lambda_zip test),
  // run as Lambda runs it, from its task root.
  const char* bootstrap = std::getenv("OVERHEAD_LAMBDA_BOOTSTRAP");
  std::vector<std::string> all = {OVERHEAD_BINARY, "lambda"};
  if (bootstrap && *bootstrap) {
    all = {bootstrap};
    set["LAMBDA_TASK_ROOT"] = std::filesystem::path(bootstrap).parent_path().string();
  }
  all.insert(all.end(), args.begin(), args.end());
  const pid_t pid = spawn(all, child_environment(set, unset));
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(10ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ports::Record record(const std::string& id, std::int64_t tokens) {
  ports::Record r;
  r.experiment = "lambda-e";
  r.tokenizer = "phi-4";
  r.experiment_tokenizer = "lambda-e#phi-4";
  r.id = id;
  r.model = "gpt-4";
  r.start_time = "2026-01-01T00:00:00.000001Z";
  r.end_time = "2026-01-01T00:00:00.000002Z";
  r.token_count = tokens;
  r.case_number = 4;
  r.worker = "w0";
  r.received = 10;
  r.render_start = 11;
  r.render_end = 12;
  r.encode_end = 13;
  r.publish_start = 14;
  return r;
}

std::string record_body(const ports::Record& r) {
  std::string out;
  ports::append_record_json(out, r);
  return out;
}

std::string stamps_body(const std::string& id, std::int64_t acked, std::int64_t deleted) {
  std::string out;
  const ports::StampPatch p{"lambda-e#phi-4", id, acked, deleted};
  ports::append_stamps_json(out, std::span<const ports::StampPatch>(&p, 1));
  return out;
}

// One SQS record as Lambda's SQS event source delivers it (the documented shape).
json sqs_record(const std::string& message_id, const std::string& body) {
  return {{"messageId", message_id},
          {"receiptHandle", "AQEB" + message_id},
          {"body", body},
          {"attributes",
           {{"ApproximateReceiveCount", "1"},
            {"SentTimestamp", "1764763200000"},
            {"SenderId", "AIDAIENQZJOLO23YVJ4VO"},
            {"ApproximateFirstReceiveTimestamp", "1764763200001"}}},
          {"messageAttributes", json::object()},
          {"md5OfBody", "e4e68fb7bd0e697a0ae8f1bb342846b3"},
          {"eventSource", "aws:sqs"},
          {"eventSourceARN", "arn:aws:sqs:us-east-1:123456789012:overhead-log"},
          {"awsRegion", "us-east-1"}};
}

class LambdaRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("overhead-lambda-" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(dir_);
    store_url_ = "sqlite:" + (dir_ / "records.db").string();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::filesystem::path dir_;
  std::string store_url_;
};

TEST_F(LambdaRuntimeTest, StoresABatchAndReportsOnlyTheMessagesItCouldNotStore) {
  FakeRuntimeApi api;
  // Invocation 1: two records, a body that is no log message, a stamp patch of a record in the
  // same batch (applies), a patch of a record never sent (not stored yet: reported), a record
  // without a body.
  json batch = {{"Records", json::array({sqs_record("m-1", record_body(record("1", 42))),
                                         sqs_record("m-2", record_body(record("2", 7))),
                                         sqs_record("m-bad", "{\"not\":\"a record\""),
                                         sqs_record("m-stamps", stamps_body("1", 100, 200)),
                                         sqs_record("m-early", stamps_body("never-stored", 1, 2))})}};
  json no_body = sqs_record("m-nobody", "");
  no_body.erase("body");
  batch["Records"].push_back(no_body);
  api.queue("req-1", batch.dump());
  // Invocation 2: not an SQS event at all.
  api.queue("req-2", R"({"detail-type":"Scheduled Event"})");
  // Invocation 3: SQS redelivers m-1 (a replay: the store keeps one row and the patched stamps).
  api.queue("req-3", json{{"Records", json::array({sqs_record("m-1", record_body(record("1", 42)))})}}.dump());

  ASSERT_EQ(run_lambda(api.api(), {"--store", store_url_, "--max-invocations", "3"}), 0);

  auto posted = api.posted();
  ASSERT_EQ(posted.count("req-1"), 1u);
  EXPECT_EQ(posted["req-1"].kind, "response");
  const json r1 = json::parse(posted["req-1"].body);
  EXPECT_EQ(r1, json::parse(R"({"batchItemFailures":[{"itemIdentifier":"m-bad"},{"itemIdentifier":"m-nobody"},
                                                    {"itemIdentifier":"m-early"}]})"));
  ASSERT_EQ(posted.count("req-2"), 1u);
  EXPECT_EQ(posted["req-2"].kind, "error");
  EXPECT_EQ(posted["req-2"].error_type_header, "InvalidEvent");
  const json e2 = json::parse(posted["req-2"].body);
  EXPECT_EQ(e2.at("errorType"), "InvalidEvent");
  EXPECT_NE(e2.at("errorMessage").get<std::string>().find("Records"), std::string::npos);
  EXPECT_TRUE(e2.at("stackTrace").is_array());
  ASSERT_EQ(posted.count("req-3"), 1u);
  EXPECT_EQ(json::parse(posted["req-3"].body), json::parse(R"({"batchItemFailures":[]})"));

  auto store = backends::open_store(store_url_);
  const auto rows = ports::scan_in_key_order(*store, "lambda-e");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, "1");
  EXPECT_EQ(rows[0].token_count, 42);
  EXPECT_EQ(rows[0].publish_acked, 100);  // the patch, kept through the replay
  EXPECT_EQ(rows[0].input_deleted, 200);
  EXPECT_EQ(rows[1].id, "2");
  EXPECT_EQ(rows[1].token_count, 7);
}

// The store fails while an invocation runs (another process holds SQLite's write lock past the
// busy timeout and the retries): every record of the batch is reported, none is lost, and the
// redelivery after the lock is gone stores them.
TEST_F(LambdaRuntimeTest, AStoreFailureReportsEveryRecordOfTheBatchAndTheRedeliveryStoresThem) {
  FakeRuntimeApi api;
  const std::string url = store_url_ + "?timeout_ms=100";
  backends::open_store(url).reset();  // the schema exists before the lock is taken
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "records.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  int rc = -2;
  std::thread lambda([&] { rc = run_lambda(api.api(), {"--store", url, "--max-invocations", "2"}); });
  const json batch = {{"Records", json::array({sqs_record("m-a", record_body(record("a", 1))),
                                               sqs_record("m-b", record_body(record("b", 2)))})}};
  api.queue("req-locked", batch.dump());
  const bool answered = api.wait_posted("req-locked", 30s);
  sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  api.queue("req-again", batch.dump());
  lambda.join();
  ASSERT_TRUE(answered);
  ASSERT_EQ(rc, 0);
  auto posted = api.posted();
  EXPECT_EQ(json::parse(posted["req-locked"].body),
            json::parse(R"({"batchItemFailures":[{"itemIdentifier":"m-a"},{"itemIdentifier":"m-b"}]})"));
  EXPECT_EQ(json::parse(posted["req-again"].body), json::parse(R"({"batchItemFailures":[]})"));
  auto store = backends::open_store(store_url_);
  EXPECT_EQ(ports::scan_in_key_order(*store, "lambda-e").size(), 2u);
}

// The request id is the Runtime API's header, echoed into the path of the answer: an id holding
// ' ', '/', '?', '#' or ".." is percent-encoded into one path segment, so the answer reaches the
// invocation it belongs to (unencoded, '#' cut the path and '?' moved the rest into a query).
TEST_F(LambdaRuntimeTest, AnOddRequestIdIsEncodedIntoOnePathSegment) {
  FakeRuntimeApi api;
  const std::string id = "id 1/../../init/error?x=1#frag";
  api.queue(id, R"({"Records":[]})");
  ASSERT_EQ(run_lambda(api.api(), {"--store", store_url_, "--max-invocations", "1"}), 0);
  auto posted = api.posted();
  ASSERT_EQ(posted.count(id), 1u) << posted.size() << " posts, init error: " << api.init_error();
  EXPECT_EQ(posted[id].kind, "response");
  EXPECT_EQ(json::parse(posted[id].body), json::parse(R"({"batchItemFailures":[]})"));
  EXPECT_EQ(api.init_error(), "");
}

TEST_F(LambdaRuntimeTest, TheStoreComesFromTheEnvironmentToo) {
  FakeRuntimeApi api;
  api.queue("req-env", json{{"Records", json::array({sqs_record("m-9", record_body(record("9", 3)))})}}.dump());
  ASSERT_EQ(run_lambda(api.api(), {"--max-invocations", "1"}, store_url_), 0);
  EXPECT_EQ(json::parse(api.posted()["req-env"].body), json::parse(R"({"batchItemFailures":[]})"));
  auto store = backends::open_store(store_url_);
  EXPECT_EQ(ports::scan_in_key_order(*store, "lambda-e").size(), 1u);
}

TEST_F(LambdaRuntimeTest, AStoreThatCannotBeOpenedIsAnInitError) {
  FakeRuntimeApi api;
  EXPECT_EQ(run_lambda(api.api(), {"--store", "nosuch://x", "--max-invocations", "1"}), 1);
  EXPECT_EQ(api.init_error_type(), "Runtime.InitError");
  const json err = json::parse(api.init_error());
  EXPECT_EQ(err.at("errorType"), "Runtime.InitError");
  EXPECT_NE(err.at("errorMessage").get<std::string>().find("nosuch"), std::string::npos) << err.dump();
}

TEST_F(LambdaRuntimeTest, NoStoreAtAllIsAnInitErrorNamingBothPlaces) {
  FakeRuntimeApi api;
  EXPECT_EQ(run_lambda(api.api(), {"--max-invocations", "1"}), 1);
  const json err = json::parse(api.init_error());
  EXPECT_NE(err.at("errorMessage").get<std::string>().find("OVERHEAD_STORE"), std::string::npos) << err.dump();
}

TEST_F(LambdaRuntimeTest, WithoutTheRuntimeApiItIsAUsageError) {
  const pid_t pid = spawn({OVERHEAD_BINARY, "lambda", "--store", store_url_}, child_environment({}, {"AWS_LAMBDA_RUNTIME_API"}));
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace overhead::aws
