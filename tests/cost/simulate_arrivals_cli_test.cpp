// `overhead simulate --replay-arrivals` as a user runs it (the built binary) on SQLite stores the
// test writes by hand: the records' received stamps become the arrivals (serve's records) or all
// arrive at 0 (a run's), in their order with their tokens, and --speedup divides the gaps. E is
// typed in as 1 s per request so that the workers' waits can be worked out by hand.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/open.hpp"
#include "ports/store.hpp"

namespace overhead::cost {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kSecond = 1'000'000'000;

fs::path temp_dir() {
  std::random_device rd;
  auto dir = fs::temp_directory_path() / ("overhead-simulate-arrivals-" + std::to_string(rd()));
  fs::create_directories(dir);
  return dir;
}

ports::Record record(const std::string& experiment, int id, int case_number, std::int64_t received, std::int64_t tokens) {
  ports::Record r;
  r.experiment = experiment;
  r.tokenizer = "llama-3.3-70b-instruct";
  r.experiment_tokenizer = experiment + "#" + r.tokenizer;
  r.id = "r" + std::to_string(id);
  r.case_number = case_number;
  r.worker = "w0";
  r.seq = id;
  r.received = received;
  r.token_count = tokens;
  return r;
}

// Runs the binary; the JSON it printed (null if none) and the exit code in `code`; what it printed
// in `text`.
nlohmann::json simulate(const std::string& args, int& code, std::string* text = nullptr) {
  const std::string cmd = std::string(OVERHEAD_BINARY) +
                          " simulate --gpu h100-sxm --gpus 2 --model llama-3.3-70b --e-us 1000000,0 --json " + args +
                          " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (std::size_t got = std::fread(buf, 1, sizeof buf, p)) out.append(buf, got);
  const int status = pclose(p);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  if (text) *text = out;
  else if (j.is_discarded()) ADD_FAILURE() << out;
  return j.is_discarded() ? nlohmann::json() : j;
}

class SimulateArrivals : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir();
    url_ = "sqlite:" + (dir_ / "records.db").string();
    auto store = backends::open_store(url_);
    const std::int64_t t0 = 1000 * kSecond;
    // A served experiment: requests came at 0, 1, 1.5 and 10 s (stored out of order), two of them
    // decoded; one record was never taken up (no received stamp).
    std::vector<ports::Record> served = {record("served", 3, 0, t0 + 10 * kSecond, 400), record("served", 0, 0, t0, 100),
                                        record("served", 2, 0, t0 + 3 * kSecond / 2, 300),
                                        record("served", 1, 0, t0 + kSecond, 200), record("served", 4, 0, 0, 500)};
    served[1].decode_end = t0 + 5;
    served[1].output_tokens = 7;
    served[2].decode_end = t0 + 5;
    served[2].output_tokens = 9;
    // A run of case 5: everything was enqueued before the worker started.
    std::vector<ports::Record> run = {record("run5", 0, 5, t0, 100), record("run5", 1, 5, t0 + kSecond / 10, 100),
                                     record("run5", 2, 5, t0 + kSecond / 5, 100)};
    EXPECT_TRUE(store->upsert_batch(served).empty());
    EXPECT_TRUE(store->upsert_batch(run).empty());
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string url_;
};

TEST_F(SimulateArrivals, ServedRecordsArriveAtTheirReceivedStamps) {
  int code = 0;
  const auto j = simulate("--replay-arrivals " + url_ + " --experiment served", code);
  ASSERT_EQ(code, 0);
  EXPECT_EQ(j["arrivals"], "replay");
  EXPECT_EQ(j["requests"], 4);
  EXPECT_EQ(j["replay"]["arrival_stamp"], "received");
  EXPECT_EQ(j["replay"]["unstamped"], 1);
  EXPECT_EQ(j["replay"]["decoded"], 2);
  // E of 1 s: runs 0-1, 1-2, 2-3, 10-11; only the request at 1.5 waits (0.5 s).
  EXPECT_DOUBLE_EQ(j["stages"][0]["wait_s"]["mean"].get<double>(), 0.5 / 4);
  EXPECT_DOUBLE_EQ(j["e_s"]["mean"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["arrival_rate"].get<double>(), 3.0 / 10);
  EXPECT_GT(j["predicted_total_s"].get<double>(), 11.0);  // plus the last request's D
}

TEST_F(SimulateArrivals, SpeedupDividesTheGaps) {
  int code = 0;
  const auto j = simulate("--replay-arrivals " + url_ + " --experiment served --speedup 2", code);
  ASSERT_EQ(code, 0);
  // Arrivals 0, 0.5, 0.75, 5: E runs 0-1, 1-2, 2-3, 5-6; waits 0, 0.5, 1.25, 0.
  EXPECT_DOUBLE_EQ(j["stages"][0]["wait_s"]["mean"].get<double>(), 1.75 / 4);
}

TEST_F(SimulateArrivals, ARunsRecordsAllArriveUpFront) {
  int code = 0;
  const auto j = simulate("--replay-arrivals " + url_ + " --experiment run5 --workers 1", code);
  ASSERT_EQ(code, 0);
  EXPECT_EQ(j["replay"]["arrival_stamp"], "upfront");
  EXPECT_DOUBLE_EQ(j["stages"][0]["wait_s"]["mean"].get<double>(), 1.0);  // waits 0, 1, 2
  // Forcing the received stamps instead: arrivals 0, 0.1, 0.2, waits 0, 0.9, 1.8.
  const auto k = simulate("--replay-arrivals " + url_ + " --experiment run5 --arrival-stamp received", code);
  ASSERT_EQ(code, 0);
  EXPECT_NEAR(k["stages"][0]["wait_s"]["mean"].get<double>(), 0.9, 1e-9);
}

TEST_F(SimulateArrivals, ThePipelineStagesAppearInTheJson) {
  int code = 0;
  const auto j = simulate("--replay-arrivals " + url_ +
                              " --experiment run5 --batch 2 --receive-ms 100 --delete-ms 50 --prefetch off --publishers 1 "
                              "--publish-capacity 1 --publish-ms 2500 --store-write-ms 10,1",
                          code);
  ASSERT_EQ(code, 0);
  ASSERT_EQ(j["stages"].size(), 4u);
  EXPECT_EQ(j["stages"][2]["name"], "publish");
  EXPECT_EQ(j["stages"][3]["name"], "consumer");
  EXPECT_FALSE(j["stages"][2]["request_path"].get<bool>());
  EXPECT_EQ(j["stages"][0]["rounds"], 2);
  EXPECT_EQ(j["input_queue"]["batch"], 2);
  // Receive 0-0.1; E 0.1-1.1 (record 0 published 1.1-3.6), E 1.1-2.1 (record 1 waits for the
  // publisher: the one place there is); delete to 2.15, receive to 2.25, E 2.25-3.25, and record 2
  // finds the place taken: the worker is blocked until 3.6, when record 1 is taken.
  EXPECT_NEAR(j["stages"][0]["blocked_s"]["mean"].get<double>(), 0.35 / 3, 1e-9);
  EXPECT_TRUE(j.contains("stored_latency_s"));
}

TEST_F(SimulateArrivals, RefusesARateBesideTheReplay) {
  int code = 0;
  std::string text;
  (void)simulate("--replay-arrivals " + url_ + " --experiment served --rate 2", code, &text);
  EXPECT_EQ(code, 1);
  EXPECT_NE(text.find("drop --rate"), std::string::npos) << text;
}

}  // namespace
}  // namespace overhead::cost
