// Client CPU per AWS call, through the real adapters, against a loopback server that answers each
// call at once with a valid, documented JSON-protocol response:
//   SQS_SendMessageBatch            sqs:// send_batch of 10 work-item bodies (~2 kB each, from the bundled
//                                   J-MT-Bench records as the seed's producer sends them: minus answer, plus tokenizer)
//   SQS_ReceiveMessage              sqs:// receive(10, 0 ms): ReceiveMessage of 10 messages, WaitTimeSeconds 0
//   SQS_DeleteMessageBatch          sqs:// delete_batch of 10 receipts
//   SQS_ChangeMessageVisibilityBatch sqs:// change_visibility_batch of 10 receipts
//   DynamoDB_BatchWriteItem/N       one BatchWriteItem of N records, body built by the store's encoder
//                                   (as bench/dynamodb_bench.cpp), for comparison in the same run
//
// Whose CPU is measured: the server runs in a child process (fork, before any thread of ours
// exists), and every benchmark reports MeasureProcessCPUTime(), i.e. CLOCK_PROCESS_CPUTIME_ID of
// this process: user + kernel time of all our threads (libcurl's, should it start any; the
// loopback TCP send/recv syscalls), and none of the server's. Not chosen: an in-process server
// with thread CPU time (it would silently drop any work of ours done off the calling thread), and
// process CPU minus the server's thread CPU (cpp-httplib accepts on one thread and answers on a
// pool of others, so no single server thread's clock covers its work). The counters user_us and
// sys_us split the CPU per call into user and kernel time (getrusage around the loop; the kernel
// accounts the split by ticks, so it is approximate, the sum is not).
//
// Run:      build/bench/overhead_aws_calls_bench --benchmark_min_time=1 --benchmark_repetitions=3
// Callgrind (a fixed number of calls of one kind, after the queue is opened and warmed up):
//   valgrind --tool=callgrind --toggle-collect='*measured_calls*' build/bench/overhead_aws_calls_bench --calls=send:200
//   (KIND one of send, receive, delete, visibility, bwi1, bwi10, bwi25)
#include <benchmark/benchmark.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "aws/json_protocol.hpp"
#include "backends/dynamodb_item.hpp"
#include "backends/open.hpp"
#include "ports/queue.hpp"
#include "ports/record.hpp"
#include "worker_record.hpp"
#include "util/line_reader.hpp"

namespace {

using namespace overhead;
using json = nlohmann::json;

constexpr const char* kJson = "application/x-amz-json-1.0";
constexpr std::size_t kBatch = 10;

// Ten work-item bodies of about 2 kB: the bundled J-MT-Bench records whose body (the record minus
// `answer`, plus `tokenizer`, as the seed's producer sends it) is 1.8-2.3 kB, in file order.
const std::vector<std::string>& work_items() {
  static const std::vector<std::string> bodies = [] {
    std::vector<std::string> out;
    util::LineReader reader(std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz");
    std::string line;
    while (out.size() < kBatch && reader.next(line)) {
      if (line.empty()) continue;
      json r = json::parse(line);
      r.erase("answer");
      r["tokenizer"] = "microsoft/phi-4";
      std::string body = r.dump();
      if (body.size() >= 1800 && body.size() <= 2300) out.push_back(std::move(body));
    }
    if (out.size() < kBatch) throw std::runtime_error("fewer than 10 work items of ~2 kB in the records");
    return out;
  }();
  return bodies;
}

std::string md5_hex(const std::string& s) {
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), d, &n, EVP_md5(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < n; ++i) {
    out.push_back(hex[d[i] >> 4]);
    out.push_back(hex[d[i] & 15]);
  }
  return out;
}

// An SQS-shaped id (8-4-4-4-12 hex) and a receipt handle of the length SQS hands out (~350 chars
// of base64); their content is never looked at by the client.
std::string message_id(std::size_t i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "5fea7756-0ea4-451a-a703-%012llx", static_cast<unsigned long long>(i) + 0xa0b1c2d3e4ULL);
  return buf;
}
std::string receipt_handle(std::size_t i) {
  static constexpr char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string r = "AQEB";
  std::uint64_t x = 0x9e3779b97f4a7c15ULL * (i + 1);
  while (r.size() < 348) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    r.push_back(b64[x & 63]);
  }
  return r + "==";
}

// The documented answers (SQS API reference, JSON protocol; DynamoDB BatchWriteItem).
void answer(const httplib::Request& req, httplib::Response& res, int port) {
  static const std::string receive_answer = [] {
    json msgs = json::array();
    const auto& bodies = work_items();
    for (std::size_t i = 0; i < kBatch; ++i)
      msgs.push_back({{"MessageId", message_id(i)},
                      {"ReceiptHandle", receipt_handle(i)},
                      {"MD5OfBody", md5_hex(bodies[i])},
                      {"Body", bodies[i]},
                      {"Attributes", {{"ApproximateReceiveCount", "1"}}}});
    return json{{"Messages", msgs}}.dump();
  }();
  const std::string target = req.get_header_value("X-Amz-Target");
  res.set_header("x-amzn-RequestId", "b6a1c3f0-6d3e-5c2b-9f8e-1a2b3c4d5e6f");
  if (target == "AmazonSQS.GetQueueUrl") {
    res.set_content(R"({"QueueUrl":"http://127.0.0.1:)" + std::to_string(port) + R"(/000000000000/work"})", kJson);
  } else if (target == "AmazonSQS.GetQueueAttributes") {
    res.set_content(R"({"Attributes":{}})", kJson);
  } else if (target == "AmazonSQS.ReceiveMessage") {
    res.set_content(receive_answer, kJson);
  } else if (target == "AmazonSQS.SendMessageBatch") {
    const json r = json::parse(req.body);
    json ok = json::array();
    std::size_t i = 0;
    for (const auto& e : r.at("Entries"))
      ok.push_back({{"Id", e.at("Id")},
                    {"MessageId", message_id(i++)},
                    {"MD5OfMessageBody", md5_hex(e.at("MessageBody").get<std::string>())}});
    res.set_content(json{{"Successful", ok}, {"Failed", json::array()}}.dump(), kJson);
  } else if (target == "AmazonSQS.DeleteMessageBatch" || target == "AmazonSQS.ChangeMessageVisibilityBatch") {
    const json r = json::parse(req.body);
    json ok = json::array();
    for (const auto& e : r.at("Entries")) ok.push_back({{"Id", e.at("Id")}});
    res.set_content(json{{"Successful", ok}, {"Failed", json::array()}}.dump(), kJson);
  } else if (target == "DynamoDB_20120810.BatchWriteItem") {
    res.set_content(R"({"UnprocessedItems":{}})", kJson);
  } else {
    res.status = 400;
    res.set_content(R"({"__type":"com.amazonaws.sqs#InvalidAction","message":"not answered by the bench"})", kJson);
  }
}

// The loopback server in a child process: forked before this process starts any thread, killed
// with this process (PR_SET_PDEATHSIG) and at exit.
pid_t g_server = -1;
int g_port = 0;

void start_server() {
  (void)work_items();  // read before forking, so the child need not
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe");
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);
    close(fds[0]);
    httplib::Server server;
    server.set_keep_alive_max_count(100000000);
    server.set_keep_alive_timeout(300);
    server.set_tcp_nodelay(true);
    const int port = server.bind_to_any_port("127.0.0.1");
    server.Post("/", [port](const httplib::Request& req, httplib::Response& res) { answer(req, res, port); });
    if (write(fds[1], &port, sizeof port) != static_cast<ssize_t>(sizeof port)) _exit(1);
    close(fds[1]);
    server.listen_after_bind();
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
  setenv("AWS_ACCESS_KEY_ID", "AKIDBENCH", 1);
  setenv("AWS_SECRET_ACCESS_KEY", "bench-secret", 1);
  unsetenv("AWS_SESSION_TOKEN");
  setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

std::string endpoint() { return "http://127.0.0.1:" + std::to_string(g_port); }

std::shared_ptr<ports::Queue> open_sqs() {
  return backends::open_queue("sqs://work?region=us-east-1&endpoint=" + endpoint());
}


// One kind of call, set up once (queue opened, receipts received, records built) and then made
// `calls()` times; the first call is a warm-up on the same connection.
struct Calls {
  std::string kind;
  std::shared_ptr<ports::Queue> queue;
  std::vector<std::string> receipts;
  std::unique_ptr<aws::JsonProtocolClient> dynamodb;
  std::vector<ports::Record> records;
  std::vector<const ports::Record*> items;
  std::string body;

  explicit Calls(std::string k, int n_records = 0) : kind(std::move(k)) {
    if (kind.starts_with("SQS")) {
      queue = open_sqs();
      for (const auto& m : queue->receive(kBatch, std::chrono::milliseconds(0))) receipts.push_back(m.receipt);
      if (receipts.size() != kBatch) throw std::runtime_error("loopback ReceiveMessage: not 10 messages");
    } else {
      std::string ep = endpoint();
      aws::JsonServiceEndpoint e{"dynamodb", "DynamoDB_20120810", "us-east-1", ep, "", ""};
      e.host = aws::endpoint_host(e.endpoint);
      dynamodb = std::make_unique<aws::JsonProtocolClient>(e);
      for (int i = 0; i < n_records; ++i) records.push_back(bench::worker_record(i));
      for (const auto& r : records) items.push_back(&r);
    }
    one();
  }

  void one() {
    if (kind == "SQS_SendMessageBatch") {
      const auto out = queue->send_batch(work_items());
      if (out.size() != kBatch || !out.back().ok()) throw std::runtime_error("SendMessageBatch failed");
      benchmark::DoNotOptimize(out);
    } else if (kind == "SQS_ReceiveMessage") {
      const auto out = queue->receive(kBatch, std::chrono::milliseconds(0));
      if (out.size() != kBatch) throw std::runtime_error("ReceiveMessage: not 10 messages");
      benchmark::DoNotOptimize(out);
    } else if (kind == "SQS_DeleteMessageBatch") {
      const auto failed = queue->delete_batch(receipts);
      if (!failed.empty()) throw std::runtime_error("DeleteMessageBatch failed");
    } else if (kind == "SQS_ChangeMessageVisibilityBatch") {
      const auto failed = queue->change_visibility_batch(receipts, std::chrono::milliseconds(30000));
      if (!failed.empty()) throw std::runtime_error("ChangeMessageVisibilityBatch failed");
    } else {
      body.clear();
      backends::append_batch_write_request(body, "records", items);
      const std::string answer = dynamodb->call("BatchWriteItem", body, std::chrono::milliseconds(5000), "bench");
      const auto parsed = json::parse(answer);
      benchmark::DoNotOptimize(parsed);
    }
  }
};

double cpu_us(const timeval& t) { return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec); }

void run(benchmark::State& state, const std::string& kind, int n_records = 0) {
  Calls calls(kind, n_records);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  for (auto _ : state) calls.one();
  getrusage(RUSAGE_SELF, &after);
  const double n = static_cast<double>(state.iterations());
  state.counters["user_us"] = (cpu_us(after.ru_utime) - cpu_us(before.ru_utime)) / n;
  state.counters["sys_us"] = (cpu_us(after.ru_stime) - cpu_us(before.ru_stime)) / n;
  if (!kind.starts_with("SQS")) {
    state.counters["body_bytes"] = static_cast<double>(calls.body.size());
    state.counters["connections"] = static_cast<double>(calls.dynamodb->http().connections_opened());
  }
}

void SQS_SendMessageBatch(benchmark::State& s) { run(s, "SQS_SendMessageBatch"); }
void SQS_ReceiveMessage(benchmark::State& s) { run(s, "SQS_ReceiveMessage"); }
void SQS_DeleteMessageBatch(benchmark::State& s) { run(s, "SQS_DeleteMessageBatch"); }
void SQS_ChangeMessageVisibilityBatch(benchmark::State& s) { run(s, "SQS_ChangeMessageVisibilityBatch"); }
void DynamoDB_BatchWriteItem(benchmark::State& s) {
  run(s, "DynamoDB_BatchWriteItem", static_cast<int>(s.range(0)));
}
BENCHMARK(SQS_SendMessageBatch)->MeasureProcessCPUTime();
BENCHMARK(SQS_ReceiveMessage)->MeasureProcessCPUTime();
BENCHMARK(SQS_DeleteMessageBatch)->MeasureProcessCPUTime();
BENCHMARK(SQS_ChangeMessageVisibilityBatch)->MeasureProcessCPUTime();
BENCHMARK(DynamoDB_BatchWriteItem)->Arg(1)->Arg(10)->Arg(25)->MeasureProcessCPUTime();

// The region callgrind collects (--toggle-collect='*measured_calls*'): n calls, nothing else.
[[gnu::noinline]] void measured_calls(Calls& calls, int n) {
  for (int i = 0; i < n; ++i) calls.one();
}

}  // namespace

int main(int argc, char** argv) {
  start_server();
  // --calls=KIND:N: the fixed-count driver for callgrind instead of the benchmarks.
  if (argc == 2 && std::strncmp(argv[1], "--calls=", 8) == 0) {
    const std::string arg = argv[1] + 8;
    const auto colon = arg.find(':');
    const std::string kind = arg.substr(0, colon);
    const int n = colon == std::string::npos ? 100 : std::atoi(arg.c_str() + colon + 1);
    const std::pair<const char*, std::pair<const char*, int>> kinds[] = {
        {"send", {"SQS_SendMessageBatch", 0}},   {"receive", {"SQS_ReceiveMessage", 0}},
        {"delete", {"SQS_DeleteMessageBatch", 0}}, {"visibility", {"SQS_ChangeMessageVisibilityBatch", 0}},
        {"bwi1", {"DynamoDB_BatchWriteItem", 1}}, {"bwi10", {"DynamoDB_BatchWriteItem", 10}},
        {"bwi25", {"DynamoDB_BatchWriteItem", 25}}};
    for (const auto& [name, what] : kinds)
      if (kind == name) {
        Calls calls(what.first, what.second);
        measured_calls(calls, n);
        std::printf("%d calls of %s\n", n, what.first);
        return 0;
      }
    std::fprintf(stderr, "--calls=KIND:N, KIND one of send receive delete visibility bwi1 bwi10 bwi25\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
