// Client CPU per DynamoDB call (encode the items, sign, HTTP on a warm pooled connection, parse the
// answer) against a loopback server that answers at once, so what is measured is our side only.
// Google Benchmark's CPU column is the calling thread's CPU time: libcurl runs the transfer on that
// thread, the loopback server on its own, so the server's work is not counted.
//   BatchWriteItem/N   one BatchWriteItem call of N records (N ≤ 25), body built by the store's encoder
//   UpsertBatch/N      the store's upsert_batch of N new records: BatchGetItem + BatchWriteItem
//   PutItem            the store's upsert of one record (conditional PutItem)
// Run: build/bench/overhead_dynamodb_bench --benchmark_min_time=2
#include <benchmark/benchmark.h>
#include <httplib.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "aws/json_protocol.hpp"
#include "backends/dynamodb_item.hpp"
#include "backends/open.hpp"
#include "ports/record.hpp"
#include "worker_record.hpp"

namespace {

using namespace overhead;

constexpr const char* kJson = "application/x-amz-json-1.0";

// The loopback DynamoDB: the seed's table, nothing stored, every write accepted.
class Loopback {
 public:
  Loopback() {
    server_.set_keep_alive_max_count(1000000);
    server_.set_tcp_nodelay(true);
    server_.Post("/", [](const httplib::Request& req, httplib::Response& res) {
      const std::string target = req.get_header_value("X-Amz-Target");
      if (target.ends_with(".DescribeTable"))
        res.set_content(R"({"Table":{"TableName":"records","TableStatus":"ACTIVE",
          "AttributeDefinitions":[{"AttributeName":"experiment_tokenizer","AttributeType":"S"},{"AttributeName":"id","AttributeType":"S"}],
          "KeySchema":[{"AttributeName":"experiment_tokenizer","KeyType":"HASH"},{"AttributeName":"id","KeyType":"RANGE"}]}})",
                        kJson);
      else if (target.ends_with(".BatchGetItem"))
        res.set_content(R"({"Responses":{"records":[]},"UnprocessedKeys":{}})", kJson);
      else if (target.ends_with(".BatchWriteItem"))
        res.set_content(R"({"UnprocessedItems":{}})", kJson);
      else res.set_content("{}", kJson);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    setenv("AWS_ACCESS_KEY_ID", "AKIDBENCH", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "bench-secret", 1);
    setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
  }
  ~Loopback() {
    server_.stop();
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

Loopback& loopback() {
  static Loopback server;
  return server;
}


void BatchWriteItem(benchmark::State& state) {
  std::string endpoint = loopback().endpoint();
  aws::JsonServiceEndpoint e{"dynamodb", "DynamoDB_20120810", "us-east-1", endpoint, "", ""};
  e.host = aws::endpoint_host(e.endpoint);
  aws::JsonProtocolClient client(e);
  std::vector<ports::Record> records;
  for (int i = 0; i < state.range(0); ++i) records.push_back(bench::worker_record(i));
  std::vector<const ports::Record*> items;
  for (const auto& r : records) items.push_back(&r);
  std::string body;
  for (auto _ : state) {
    body.clear();
    backends::append_batch_write_request(body, "records", items);
    const std::string answer = client.call("BatchWriteItem", body, std::chrono::milliseconds(5000), "bench");
    const auto parsed = nlohmann::json::parse(answer);
    benchmark::DoNotOptimize(parsed);
  }
  state.counters["body_bytes"] = static_cast<double>(body.size());
  state.counters["connections"] = static_cast<double>(client.http().connections_opened());
}
BENCHMARK(BatchWriteItem)->Arg(1)->Arg(10)->Arg(25);

void UpsertBatch(benchmark::State& state) {
  const auto store = backends::open_store("dynamodb://records?region=us-east-1&endpoint=" + loopback().endpoint());
  std::vector<ports::Record> records;
  for (int i = 0; i < state.range(0); ++i) records.push_back(bench::worker_record(i));
  for (auto _ : state) benchmark::DoNotOptimize(store->upsert_batch(records));
}
BENCHMARK(UpsertBatch)->Arg(10)->Arg(25);

void PutItem(benchmark::State& state) {
  const auto store = backends::open_store("dynamodb://records?region=us-east-1&endpoint=" + loopback().endpoint());
  const ports::Record r = bench::worker_record(1);
  for (auto _ : state) store->upsert(r);
}
BENCHMARK(PutItem);

}  // namespace

BENCHMARK_MAIN();
