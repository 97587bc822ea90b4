// Poison messages on a Redis input stream: at its head a body that is not JSON, an item naming a
// tokenizer no worker loaded, an item whose prompt is over --max-prompt-bytes, and an item that a
// reader took `max_receives` times without deleting it (a worker that died on it each time);
// behind them 60 good items. A real `overhead worker` and `overhead consume` run over it. Every
// good item must be stored, and each poison message must end in the stream's dead-letter stream
// `STREAM-dlq` with its reason (the worker's kind and message, or "max_receives exceeded"),
// never again in the input.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "backends/open.hpp"
#include "fault_support.hpp"
#include "ports/queue.hpp"

namespace overhead::fault_test {
namespace {

using namespace std::chrono_literals;

// The entries of the dead-letter stream as field maps, read with redis-cli (the test's own view of
// the server, independent of the adapter under test).
std::vector<std::map<std::string, std::string>> dlq_entries(const std::string& host, const std::string& port,
                                                            const std::string& password, const std::string& stream) {
  const std::string cmd = "REDISCLI_AUTH='" + password + "' redis-cli --no-auth-warning -h " + host + " -p " + port +
                          " --raw XRANGE '" + stream + "' - + 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::vector<std::string> lines;
  char buf[65536];
  std::string line;
  while (std::fgets(buf, sizeof buf, p)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      lines.push_back(line);
      line.clear();
    }
  }
  pclose(p);
  // --raw prints each entry as its id, then field and value lines.
  std::vector<std::map<std::string, std::string>> out;
  static const std::set<std::string> kFields{"b", "reason", "receives", "source", "kind"};
  for (std::size_t i = 0; i < lines.size();) {
    if (lines[i].find('-') != std::string::npos && !kFields.count(lines[i]) &&
        lines[i].find_first_not_of("0123456789-") == std::string::npos) {
      out.emplace_back();
      out.back()["id"] = lines[i++];
      continue;
    }
    if (!out.empty() && i + 1 < lines.size() && kFields.count(lines[i])) {
      out.back()[lines[i]] = lines[i + 1];
      i += 2;
      continue;
    }
    ++i;
  }
  return out;
}

TEST(RedisPoison, PoisonMessagesReachTheDeadLetterStreamWithTheirReasonAndDoNotBlockTheRest) {
  const std::string dir = ::testing::TempDir() + unique_name("redis-poison-");
  std::filesystem::create_directories(dir);
  const std::string redis = service_env("OVERHEAD_REDIS_ENV", "REDIS_URL");
  const std::string stream = unique_name("poison-in-");
  const std::string in_url = redis + "/" + stream + "?max_receives=2&visibility_ms=300";
  const std::string log_url = redis + "/" + unique_name("poison-log-");
  const std::string store_url = "sqlite:" + dir + "/records.db";
  auto in = backends::open_queue(in_url);

  // 1. The message a reader takes max_receives times and never deletes: it must not come back.
  const std::string stuck = R"({"tokenizer":"phi-4","id":"stuck-1","model":"m","prompt":[{"role":"user","content":"hi"}]})";
  ports::send_all(*in, std::vector<std::string>{stuck});
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(wait_for(5s, [&] { return !in->receive(1, 100ms).empty(); })) << "receive " << i + 1;
  }
  std::this_thread::sleep_for(400ms);  // its visibility ends; the next receive moves it to the DLQ
  // 2. Poison ahead of the good items: not JSON, an unknown tokenizer, a prompt over the limit.
  const std::string not_json = "{\"tokenizer\": \"phi-4\", \"id\": ";
  const std::string unknown =
      R"({"tokenizer":"no-such-tokenizer","id":"unknown-1","model":"m","prompt":[{"role":"user","content":"hi"}]})";
  const std::string big = R"({"tokenizer":"phi-4","id":"big-1","model":"m","prompt":[{"role":"user","content":")" +
                          std::string(20000, 'x') + "\"}]}";
  ports::send_all(*in, std::vector<std::string>{not_json, unknown, big});
  std::string out;
  ASSERT_EQ(run_overhead("enqueue --tokenizers phi-4 --limit 60 --queue '" + in_url + "' --out '" + dir + "'", out), 0) << out;

  Child worker({"worker", "--queue", in_url, "--log-queue", log_url, "--tokenizers", "phi-4", "--experiment", "poison",
                "--max-prompt-bytes", "10000", "--idle-exit", "2", "--no-progress", "--out", dir},
               dir + "/worker.log");
  // Exit 1: items failed, and the summary line says which kinds.
  EXPECT_EQ(worker.wait(120s), 1) << worker.output();
  Child consumer({"consume", "--log-queue", log_url, "--store", store_url, "--idle-exit", "1", "--no-progress", "--out", dir},
                 dir + "/consume.log");
  EXPECT_EQ(consumer.wait(120s), 0) << consumer.output();
  std::printf("%s%s", worker.output().c_str(), consumer.output().c_str());

  const StoreRows rows = store_rows(store_url, "poison");
  std::size_t missing = 0;
  for (const auto& k : expected_keys("poison", {"phi-4"}, 60))
    if (!rows.keys.count(k)) ++missing;
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(rows.rows, 60u);  // the stuck item was never processed: it went to the DLQ first
  const auto c = in->counts();
  EXPECT_EQ(c.visible + c.in_flight, 0u);

  const auto letters = dlq_entries(service_env("OVERHEAD_REDIS_ENV", "REDIS_HOST"), service_env("OVERHEAD_REDIS_ENV", "REDIS_PORT"),
                                   service_env("OVERHEAD_REDIS_ENV", "REDIS_PASSWORD"), stream + "-dlq");
  std::map<std::string, std::string> reason_of_body;
  for (const auto& e : letters) {
    std::printf("dead letter %s: reason \"%s\", receives %s\n", e.count("source") ? e.at("source").c_str() : "?",
                e.count("reason") ? e.at("reason").substr(0, 160).c_str() : "",
                e.count("receives") ? e.at("receives").c_str() : "?");
    if (e.count("b")) reason_of_body[e.at("b")] = e.count("reason") ? e.at("reason") : "";
  }
  EXPECT_EQ(letters.size(), 4u);
  ASSERT_TRUE(reason_of_body.count(stuck));
  EXPECT_NE(reason_of_body[stuck].find("max_receives"), std::string::npos) << reason_of_body[stuck];
  ASSERT_TRUE(reason_of_body.count(not_json));
  EXPECT_NE(reason_of_body[not_json].find("bad_message"), std::string::npos) << reason_of_body[not_json];
  ASSERT_TRUE(reason_of_body.count(unknown));
  EXPECT_NE(reason_of_body[unknown].find("unknown_tokenizer"), std::string::npos) << reason_of_body[unknown];
  EXPECT_NE(reason_of_body[unknown].find("no-such-tokenizer"), std::string::npos) << reason_of_body[unknown];
  ASSERT_TRUE(reason_of_body.count(big));
  EXPECT_NE(reason_of_body[big].find("prompt_too_large"), std::string::npos) << reason_of_body[big];
  // `overhead status` counts them.
  const ports::QueueStatus s = in->status();
  ASSERT_TRUE(s.dead_letters.has_value());
  EXPECT_EQ(s.dead_letters->visible, 4u);
}

}  // namespace
}  // namespace overhead::fault_test
