// The CLI end to end with the real tokenizers: bad inputs of every kind are counted and
// dead-lettered while the run goes on, the exit code is 1 unless --allow-failures; and the
// separate processes (enqueue, worker, consume) over the durable queue fill the store.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "backends/open.hpp"
#include "ports/store.hpp"
#include "pipe/dead_letter.hpp"
#include "test_util.hpp"

namespace overhead::pipe {
using ports::Record;
using ports::scan_in_key_order;
using backends::open_store;
namespace {

namespace fs = std::filesystem;

bool have_models() { return fs::exists(fs::path(OVERHEAD_MODELS_DIR) / "gemma-2-27b-it" / "tokenizer.json"); }

int run(const std::string& args) {
  const std::string cmd = std::string(OVERHEAD_BINARY) + " " + args + " >/dev/null 2>&1";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string line(const std::string& id, const std::string& role, const std::string& content) {
  nlohmann::json j = {{"id", id}, {"model", "m"}, {"answer", "a"}, {"usage", nullptr},
                      {"prompt", nlohmann::json::array({{{"role", role}, {"content", content}}})}};
  if (role == "system") j["prompt"].push_back({{"role", "user"}, {"content", "hi"}});
  return j.dump();
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

TEST(RunCli, BadInputsAreCountedDeadLetteredAndFailTheExitCode) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-bad");
  {
    std::ofstream data(dir / "bad.jsonl");
    data << line("g1", "user", "こんにちは") << "\n"
         << line("g2", "user", "hello") << "\n"
         << line("sys", "system", "be brief") << "\n"           // Gemma-2's template rejects it
         << line("big", "user", std::string(3000, 'x')) << "\n"  // over --max-prompt-bytes
         << "{\"id\": \"broken\"\n"                              // malformed JSON
         << R"({"model":"m","prompt":[{"role":"user","content":"x"}]})" << "\n"  // no id
         << R"({"id":"s","model":"m","prompt":"just a string"})" << "\n";        // prompt not a list
  }
  const std::string args = "run --case 2 --data " + (dir / "bad.jsonl").string() +
                           " --tokenizers gemma-2-27b-it,no-such-tokenizer --max-prompt-bytes 2000 --no-progress --out " +
                           (dir / "out").string();
  EXPECT_EQ(run(args), 1);
  const auto summary = read_json(dir / "out" / "summary.json");
  const auto& f = summary["failures"];
  EXPECT_EQ(f.value("malformed_json", 0), 1);
  EXPECT_EQ(f.value("missing_field", 0), 1);
  EXPECT_EQ(f.value("bad_prompt", 0), 1);
  EXPECT_EQ(f.value("template_error", 0), 1);
  EXPECT_EQ(f.value("prompt_too_large", 0), 2);
  EXPECT_EQ(f.value("unknown_tokenizer", 0), 3);
  EXPECT_EQ(summary["cases"][0]["ok"], 2);
  // Every failure is in the dead-letter file with its origin and reason.
  std::ifstream letters(dir / "out" / "dead_letters_case2.jsonl");
  std::string l;
  int n = 0;
  bool saw_line_5 = false, saw_system = false;
  while (std::getline(letters, l)) {
    const auto j = nlohmann::json::parse(l);
    EXPECT_FALSE(j["reason"].get<std::string>().empty());
    saw_line_5 |= j["origin"].get<std::string>().find(":5") != std::string::npos;
    saw_system |= j["kind"] == "template_error" && j["reason"].get<std::string>().find("System role") != std::string::npos;
    ++n;
  }
  EXPECT_EQ(n, 9);
  EXPECT_TRUE(saw_line_5) << "the malformed line is named by its number";
  EXPECT_TRUE(saw_system) << "the template's own message is kept";
  auto store = open_store("sqlite:" + (dir / "out" / "records.db").string());
  int stored = 0;
  store->scan("jmtbench-case2", [&](const Record&) { ++stored; });
  EXPECT_EQ(stored, 2);

  EXPECT_EQ(run(args + " --allow-failures"), 0);
  fs::remove_all(dir);
}

// Two lines sharing an id used to give `ok 6, stored 3` and exit 0: the store keeps one record
// per tokenizer and id. The later line is now a counted duplicate_id dead letter.
TEST(RunCli, DuplicateIdsAreCountedAndFailTheExitCode) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-dup");
  {
    std::ofstream data(dir / "dup.jsonl");
    data << line("x", "user", "one") << "\n" << line("y", "user", "two") << "\n" << line("x", "user", "three") << "\n";
  }
  const std::string args = "run --case 2 --data " + (dir / "dup.jsonl").string() +
                           " --tokenizers gemma-2-27b-it --no-progress --no-report --out " + (dir / "out").string();
  EXPECT_EQ(run(args), 1);
  const auto summary = read_json(dir / "out" / "summary.json");
  EXPECT_EQ(summary["failures"].value("duplicate_id", 0), 1);
  EXPECT_EQ(summary["cases"][0]["ok"], 2);
  EXPECT_EQ(summary["cases"][0]["stored"], 2);
  std::ifstream letters(dir / "out" / "dead_letters_case2.jsonl");
  std::string l;
  ASSERT_TRUE(std::getline(letters, l));
  const auto j = nlohmann::json::parse(l);
  EXPECT_EQ(j["kind"], "duplicate_id");
  EXPECT_NE(j["origin"].get<std::string>().find("dup.jsonl:3"), std::string::npos);
  EXPECT_NE(j["reason"].get<std::string>().find("line 1"), std::string::npos);
  EXPECT_EQ(run(args + " --allow-failures"), 0);
}

// The command's exit status and everything it printed (stdout and stderr).
std::pair<int, std::string> capture(const std::string& args) {
  const std::string cmd = std::string(OVERHEAD_BINARY) + " " + args + " 2>&1";
  std::string output;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, "popen failed"};
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) output += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// Every fit of a report's fits.json is on n records.
void expect_fits_on(const fs::path& report_dir, int n) {
  const auto fits = read_json(report_dir / "fits.json");
  ASSERT_FALSE(fits["fits"].empty());
  for (const auto& f : fits["fits"]) EXPECT_EQ(f["n"], n) << report_dir << ": " << f.dump();
}

// Issue 8 defect 4, small: a run into a store that already holds an earlier run's rows of the
// same experiment used to fit on both runs' records. Every record now carries its run's id; the
// report of a run covers exactly the records it wrote, and `analyze --run` picks one run.
TEST(RunCli, ReportCoversOnlyTheRecordsOfThisRun) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const std::string data = std::string(OVERHEAD_SOURCE_DIR) + "/data/jmtbench/records.jsonl.gz";
  if (!fs::exists(data)) GTEST_SKIP() << "bundled data missing";
  const auto dir = testing::temp_dir("cli-runs");
  const std::string store_url = "sqlite:" + (dir / "s.db").string();
  const std::string common = " --case 2 --data " + data + " --tokenizers gemma-2-27b-it --no-progress --store " + store_url;
  ASSERT_EQ(run("run --limit 40 --no-report --out " + (dir / "a").string() + common), 0);
  const auto [rc, output] = capture("run --limit 5 --out " + (dir / "b").string() + common);
  ASSERT_EQ(rc, 0) << output;
  const std::string id_a = read_json(dir / "a" / "summary.json")["run_id"];
  const auto summary_b = read_json(dir / "b" / "summary.json");
  const std::string id_b = summary_b["run_id"];
  EXPECT_NE(id_a, id_b);
  EXPECT_NE(output.find("run id: " + id_b), std::string::npos) << output;
  EXPECT_NE(output.find("35 record(s) of experiment jmtbench-case2"), std::string::npos) << output;
  EXPECT_NE(output.find("this report covers run " + id_b + " only"), std::string::npos) << output;
  EXPECT_EQ(summary_b["cases"][0]["stored"], 5);
  expect_fits_on(dir / "b" / "report", 5);

  // The store: B's 5 ids replaced A's rows of them, A's other 35 stay with A's id.
  std::map<std::string, int> by_run;
  open_store(store_url)->scan("", [&](const Record& r) { ++by_run[r.run_id]; });
  EXPECT_EQ(by_run, (std::map<std::string, int>{{id_a, 35}, {id_b, 5}}));

  const std::string analyze = "analyze --no-png --store " + store_url + " --out " + (dir / "r").string();
  const auto [all_rc, all_out] = capture(analyze);
  ASSERT_EQ(all_rc, 0) << all_out;
  EXPECT_NE(all_out.find("jmtbench-case2 holds records of 2 runs"), std::string::npos) << all_out;
  expect_fits_on(dir / "r", 40);
  const auto [a_rc, a_out] = capture(analyze + " --run " + id_a);
  ASSERT_EQ(a_rc, 0) << a_out;
  EXPECT_EQ(a_out.find("holds records of"), std::string::npos) << a_out;
  expect_fits_on(dir / "r", 35);
  const auto [none_rc, none_out] = capture(analyze + " --run 20000101T000000Z-00000000");
  EXPECT_EQ(none_rc, 1) << none_out;
  EXPECT_NE(none_out.find("has no records"), std::string::npos) << none_out;
  EXPECT_EQ(capture(analyze + " --run 'bad id'").first, 2);
  fs::remove_all(dir);
}

// Two runs writing into one store at the same time, into the same experiment (other ids): each
// report and each summary covers exactly its own records. A start-time filter cannot tell them
// apart, since each run's records begin after the other run started.
TEST(RunCli, ConcurrentRunsIntoOneStoreAreSeparated) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-concurrent");
  const std::map<std::string, int> sizes{{"a", 12}, {"b", 20}};
  for (const auto& [name, n] : sizes) {
    std::ofstream data(dir / (name + ".jsonl"));
    for (int i = 0; i < n; ++i) data << line(name + std::to_string(i), "user", "hello " + std::string(i, 'x')) << "\n";
  }
  const std::string store_url = "sqlite:" + (dir / "s.db").string();
  auto args = [&](const std::string& name) {
    return std::string(OVERHEAD_BINARY) + " run --case 2,3 --experiment conc --tokenizers gemma-2-27b-it --no-progress --data " +
           (dir / (name + ".jsonl")).string() + " --store " + store_url + " --out " + (dir / name).string() + " > " +
           (dir / (name + ".log")).string() + " 2>&1";
  };
  const std::string both = "(" + args("a") + ") & (" + args("b") + "); s=$?; wait $!; exit $(( s | $? ))";
  const int status = std::system(("bash -c '" + both + "'").c_str());
  auto log = [&](const std::string& name) {
    std::ifstream in(dir / (name + ".log"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log("a") << log("b");
  for (const auto& [name, n] : sizes) {
    const auto summary = read_json(dir / name / "summary.json");
    for (const auto& c : summary["cases"]) EXPECT_EQ(c["stored"], n) << name << ": " << c.dump();
    expect_fits_on(dir / name / "report", n);
  }
  fs::remove_all(dir);
}

// --decoder sim end to end: case 5 sends the bundled MT-Bench records through the input queue
// (their answers with them), the worker waits the modelled D, and the stored records carry the
// decoder's stamps and the answer's length; a bad --decoder is a usage error that runs nothing.
TEST(RunCli, DecoderSimStampsTheStoredRecords) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-decoder");
  EXPECT_EQ(run("run --case 5 --limit 2 --tokenizers phi-4 --decoder sim:prefill=1000,decode=0 --no-progress --out " +
                (dir / "bad").string()),
            2);
  EXPECT_FALSE(fs::exists(dir / "bad" / "summary.json")) << "nothing may run on a usage error";
  const double decode_tok_s = 20000;
  ASSERT_EQ(run("run --case 5 --limit 5 --tokenizers phi-4,gemma-2-27b-it --decoder sim:prefill=1e6,decode=20000,ttft_ms=1 "
                "--no-progress --no-report --out " + (dir / "out").string()),
            0);
  EXPECT_EQ(read_json(dir / "out" / "summary.json")["decoder"], "sim:prefill=1e+06,decode=20000,ttft_ms=1");
  const auto store = open_store("sqlite:" + (dir / "out" / "records.db").string());
  const auto rows = scan_in_key_order(*store, "jmtbench-case5");
  ASSERT_EQ(rows.size(), 10u);
  std::map<std::string, std::int64_t> phi_tokens;
  for (const auto& r : rows) {
    EXPECT_GT(r.output_tokens, 0) << r.id << ": every MT-Bench record has an answer";
    EXPECT_LE(r.encode_end, r.decode_start) << r.id;
    EXPECT_GE(r.first_token - r.decode_start, 1'000'000) << r.id << ": ttft_ms=1";
    EXPECT_LE(r.first_token, r.decode_end) << r.id;
    EXPECT_LE(r.decode_end, r.publish_start) << r.id;
    EXPECT_GE(r.decode_end - r.first_token, static_cast<std::int64_t>(double(r.output_tokens) / decode_tok_s * 1e9) - 1000)
        << r.id;
    if (r.tokenizer == "phi-4") phi_tokens[r.id] = r.output_tokens;
  }
  // Counted with each item's own tokenizer: the same answer, two counts that need not agree.
  std::size_t differ = 0;
  for (const auto& r : rows)
    if (r.tokenizer == "gemma-2-27b-it") differ += phi_tokens.at(r.id) != r.output_tokens;
  EXPECT_GT(differ, 0u);
  fs::remove_all(dir);
}

TEST(RunCli, SeparateProcessesOverTheDurableQueue) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-procs");
  const std::string data = std::string(OVERHEAD_DATA_DIR) + "/jmtbench/records.jsonl.gz";
  const std::string in = "sqlite-queue:" + (dir / "q.db").string() + "?name=in";
  const std::string log = "sqlite-queue:" + (dir / "q.db").string() + "?name=log";
  const std::string out = (dir / "out").string();
  ASSERT_EQ(run("enqueue --data " + data + " --limit 20 --tokenizers phi-4,gemma-2-27b-it --queue '" + in + "' --out " + out), 0);
  ASSERT_EQ(run("worker --queue '" + in + "' --log-queue '" + log +
                "' --tokenizers phi-4,gemma-2-27b-it --idle-exit 0.2 --no-progress --experiment procs --out " + out), 0);
  ASSERT_EQ(run("consume --log-queue '" + log + "' --idle-exit 0.2 --no-progress --out " + out), 0);
  auto store = open_store("sqlite:" + (dir / "out" / "records.db").string());
  int stored = 0, deleted = 0;
  store->scan("procs", [&](const Record& r) {
    ++stored;
    deleted += r.input_deleted > 0 && r.publish_acked > 0;
    EXPECT_GT(r.token_count, 0);
  });
  EXPECT_EQ(stored, 40);
  EXPECT_EQ(deleted, 40) << "stamp patches reached the store";
  fs::remove_all(dir);
}


// A run whose tokenizers all fail to load used to go through every case and dead-letter every
// item; it now stops before taking input, saying which names failed and what names are known.
TEST(RunCli, NoLoadableTokenizerFailsFast) {
  const auto dir = testing::temp_dir("cli-notok");
  const auto [status, output] = capture("run --case 2 --limit 5 --tokenizers nope1,nope2 --no-progress --no-report --out " +
                                        (dir / "out").string());
  EXPECT_EQ(status, 1) << output;
  EXPECT_NE(output.find("tokenizer nope1 cannot be loaded"), std::string::npos) << output;
  EXPECT_NE(output.find("none of the tokenizers of --tokenizers loads"), std::string::npos) << output;
  EXPECT_NE(output.find("phi-4"), std::string::npos) << output;  // the known names are listed
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
  // One loadable name among bad ones still runs: its items are stored, the others dead-lettered.
  if (have_models()) {
    const auto [mixed, out2] = capture("run --case 2 --limit 3 --tokenizers nope1,phi-4 --no-progress --no-report "
                                       "--allow-failures --out " + (dir / "mixed").string());
    EXPECT_EQ(mixed, 0) << out2;
  }
  fs::remove_all(dir);
}

// The first dead letters are printed once each: "FILE:N: reason" and "message N: reason", not
// "FILE:N: line N: reason" and "message N: message N: reason".
TEST(RunCli, DeadLettersPrintTheirPlaceOnce) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-prefix");
  {
    std::ofstream data(dir / "d.jsonl");
    data << line("a", "user", std::string(200, 'x')) << "\n" << "{not json\n";
  }
  const std::string queue = "'sqlite-queue:" + (dir / "in.db").string() + "'";
  const auto [enq, enq_out] = capture("enqueue --data " + (dir / "d.jsonl").string() + " --tokenizers phi-4 --queue " +
                                      queue + " --out " + dir.string());
  EXPECT_EQ(enq, 1) << enq_out;
  EXPECT_NE(enq_out.find("d.jsonl:2: invalid JSON"), std::string::npos) << enq_out;
  EXPECT_EQ(enq_out.find("line 2: line 2"), std::string::npos) << enq_out;
  EXPECT_EQ(enq_out.find("d.jsonl:2: line 2:"), std::string::npos) << enq_out;
  const auto [wkr, wkr_out] =
      capture("worker --queue " + queue + " --log-queue 'sqlite-queue:" + (dir / "log.db").string() +
              "' --tokenizers phi-4 --idle-exit 1 --max-prompt-bytes 100 --no-progress --out " + dir.string());
  EXPECT_EQ(wkr, 1) << wkr_out;
  EXPECT_NE(wkr_out.find("message 1: prompt of"), std::string::npos) << wkr_out;
  EXPECT_EQ(wkr_out.find("message 1: message 1"), std::string::npos) << wkr_out;
  fs::remove_all(dir);
}


// A runaway line (here 5 MB of prompt) is dead-lettered by the default --max-prompt-bytes, and its
// dead letter keeps a 4 KiB excerpt with the full size and a digest, not a copy of the line.
TEST(RunCli, ARunawayLineIsBoundedByDefaultAndItsDeadLetterIsAnExcerpt) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-runaway");
  const std::string big = line("big", "user", std::string(5u << 20, 'x'));
  {
    std::ofstream data(dir / "d.jsonl");
    data << line("a", "user", "hello") << "\n" << big << "\n";
  }
  const auto [status, output] = capture("run --case 2 --data " + (dir / "d.jsonl").string() +
                                        " --tokenizers phi-4 --no-progress --no-report --out " + (dir / "out").string());
  EXPECT_EQ(status, 1) << output;
  const auto summary = read_json(dir / "out" / "summary.json");
  EXPECT_EQ(summary["failures"].value("prompt_too_large", 0), 1) << summary.dump();
  EXPECT_EQ(summary["cases"][0]["stored"], 1);
  std::ifstream letters(dir / "out" / "dead_letters_case2.jsonl");
  std::string l;
  ASSERT_TRUE(std::getline(letters, l));
  EXPECT_LT(l.size(), 6000u);
  const auto j = nlohmann::json::parse(l);
  EXPECT_EQ(j["kind"], "prompt_too_large");
  EXPECT_LE(j["payload"].get<std::string>().size(), DeadLetterSink::kMaxPayloadBytes);
  EXPECT_GT(j["payload_bytes"].get<std::size_t>(), std::size_t{5u << 20});
  EXPECT_EQ(j["payload_fnv1a64"].get<std::string>().size(), 16u);
  fs::remove_all(dir);
}


// Every dead letter names where its input came from in one of two forms, whatever its kind and
// stage: "PATH:LINE" for a data line (refused when read, or as an item of cases 1-4 and of the
// producer) and "QUEUE-URL message ID" for a queue message (worker and consumer alike).
TEST(RunCli, DeadLetterOriginsNameTheFileOrTheQueue) {
  if (!have_models()) GTEST_SKIP() << "tokenizer files not fetched";
  const auto dir = testing::temp_dir("cli-origins");
  const std::string data = (dir / "d.jsonl").string();
  {
    std::ofstream out(data);
    out << line("a", "user", std::string(200, 'x')) << "\n" << "{not json\n";
  }
  EXPECT_EQ(run("run --case 2,5 --data " + data + " --max-prompt-bytes 100 --tokenizers phi-4 --no-progress "
                "--no-report --out " + (dir / "out").string()),
            1);
  std::map<std::string, std::string> origin_of;  // "case/kind" -> origin
  for (const int n : {2, 5}) {
    std::ifstream letters(dir / "out" / ("dead_letters_case" + std::to_string(n) + ".jsonl"));
    for (std::string l; std::getline(letters, l);) {
      const auto j = nlohmann::json::parse(l);
      origin_of[std::to_string(n) + "/" + j["kind"].get<std::string>()] = j["origin"];
      EXPECT_NE(j["reason"].get<std::string>().rfind(j["origin"].get<std::string>() + ":", 0), 0u)
          << "the reason repeats the origin: " << l;
    }
  }
  EXPECT_EQ(origin_of["2/malformed_json"], data + ":2");
  EXPECT_EQ(origin_of["2/prompt_too_large"], data + ":1");
  EXPECT_EQ(origin_of["5/malformed_json"], data + ":2");
  EXPECT_EQ(origin_of["5/prompt_too_large"], "mem:in message 1");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
