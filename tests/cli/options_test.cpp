// Usage errors of the pipeline commands: a value outside an option's range is refused before
// anything runs, with exit code 2 and a message naming the option and the accepted range. Before
// these checks, "-1" in an unsigned option wrapped around to 18446744073709551615 and empty lists
// or zero counts were taken silently.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

struct UsageCase {
  std::string args;    // after the subcommand's required options
  std::string option;  // the option the message must name
  std::string range;   // and the range (or form) it must state
};

void PrintTo(const UsageCase& c, std::ostream* os) { *os << c.args; }

class PipelineUsage : public ::testing::TestWithParam<UsageCase> {};

// Every command runs on a one-line data file and a tokenizer that does not exist, so that a value
// that slipped through would run (quickly) and end with exit 0 or 1, not 2.
TEST_P(PipelineUsage, IsRefusedNamingOptionAndRange) {
  const auto dir = temp_dir("usage");
  const std::string data =
      write_file(dir / "one.jsonl", R"({"id":"a","model":"m","prompt":[{"role":"user","content":"hi"}]})" "\n");
  std::string args = GetParam().args;
  for (std::size_t at; (at = args.find("DATA")) != std::string::npos;) args.replace(at, 4, data);
  for (std::size_t at; (at = args.find("OUT")) != std::string::npos;) args.replace(at, 3, (dir / "out").string());
  const RunResult r = run_overhead(args + " </dev/null");
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_NE(r.err.find(GetParam().option), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(GetParam().range), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "summary.json")) << "nothing may run on a usage error";
}

const std::string kRunAnyCase = "run --no-progress --no-report --tokenizers no-such --data DATA --out OUT ";
const std::string kRun = kRunAnyCase + "--case 2 ";
const std::string kEnqueue = "enqueue --queue mem:in --tokenizers no-such --data DATA --out OUT ";
const std::string kWorker = "worker --queue mem:in --log-queue mem:log --no-progress --idle-exit 0 --out OUT ";
const std::string kConsume = "consume --log-queue mem:log --no-progress --idle-exit 0 --out OUT ";
// A value that slipped through would start a gateway that stops at once: its tokenizer does not exist.
const std::string kServe = "serve --listen 127.0.0.1:0 --tokenizers no-such --out OUT ";

INSTANTIATE_TEST_SUITE_P(
    Options, PipelineUsage,
    ::testing::Values(
        UsageCase{kRun + "--limit -1", "--limit", "0..1000000000"},
        UsageCase{kEnqueue + "--limit 18446744073709551615", "--limit", "0..1000000000"},
        UsageCase{kRun + "--batch -1", "--batch", "1..10"},
        UsageCase{kRun + "--batch 0", "--batch", "1..10"},
        UsageCase{kRun + "--batch 11", "--batch", "1..10"},
        UsageCase{kEnqueue + "--batch 11", "--batch", "1..10"},
        UsageCase{kWorker + "--batch 11", "--batch", "1..10"},
        UsageCase{kRun + "--publishers 0", "--publishers", "1..256"},
        UsageCase{kRun + "--publishers -1", "--publishers", "1..256"},
        UsageCase{kRun + "--workers 0", "--workers", "1..256"},
        UsageCase{kRun + "--workers -1", "--workers", "1..256"},
        UsageCase{kRun + "--max-in-flight -1", "--max-in-flight", "0..1000000"},
        UsageCase{kWorker + "--max-in-flight -1", "--max-in-flight", "0..1000000"},
        UsageCase{kRun + "--max-prompt-bytes -1", "--max-prompt-bytes", "0..4294967296"},
        UsageCase{kRun + "--case ''", "--case", "1..5"},
        UsageCase{kRun + "--case 1,,2", "--case", "1..5"},
        UsageCase{kRun + "--case 6", "--case", "1..5"},
        UsageCase{kRun + "--tokenizers ''", "--tokenizers", "comma-separated"},
        UsageCase{kEnqueue + "--tokenizers a,", "--tokenizers", "empty name"},
        UsageCase{kWorker + "--tokenizers ''", "--tokenizers", "comma-separated"},
        UsageCase{kRun + "--experiment ''", "--experiment", "empty"},
        UsageCase{kRun + "--date 2024-02-30", "--date", "not a real date"},
        UsageCase{kWorker + "--date tomorrow", "--date", "YYYY-MM-DD"},
        UsageCase{kWorker + "--case 0", "--case", "1..5"},
        UsageCase{kWorker + "--idle-exit -1", "--idle-exit", "0..604800"},
        UsageCase{kConsume + "--idle-exit nan", "--idle-exit", "0..604800"},
        UsageCase{"worker --queue 'mem:in?visibility_ms=-5' --log-queue mem:log --idle-exit 0 --out OUT", "--queue",
                  "visibility_ms must be in 0..43200000"},
        UsageCase{kRunAnyCase + "--case 5 --queue 'mem:in?max_receives=-1'", "--queue", "max_receives must be in 0..1000"},
        UsageCase{kRunAnyCase + "--case 3 --log-queue 'mem:log?visiblity_ms=5'", "--log-queue", "unknown parameter"},
        UsageCase{"enqueue --queue 'mem:in?max_message_bytes=-1' --tokenizers t --data DATA --out OUT",
                  "--queue", "max_message_bytes must be in 1..1073741824"},
        UsageCase{kConsume + "--store nope:x", "--store", "unknown scheme"},
        // NaN, infinities and negatives: CLI11's own range checks let NaN through (every
        // comparison with it is false), and "--request-timeout nan" made every request a 504.
        UsageCase{kServe + "--request-timeout nan", "--request-timeout", "0.001..3600"},
        UsageCase{kServe + "--request-timeout inf", "--request-timeout", "0.001..3600"},
        UsageCase{kServe + "--request-timeout -1", "--request-timeout", "0.001..3600"},
        UsageCase{"serve --listen 127.0.0.1:99999 --tokenizers no-such --out OUT", "--listen", "0..65535"},
        UsageCase{"serve --listen 127.0.0.1:80abc --tokenizers no-such --out OUT", "--listen", "0..65535"},
        UsageCase{"serve --listen 127.0.0.1:-1 --tokenizers no-such --out OUT", "--listen", "0..65535"},
        UsageCase{kServe + "--first-token-timeout nan", "--first-token-timeout", "0.001..3600"},
        UsageCase{kServe + "--stream-idle-timeout 0", "--stream-idle-timeout", "0.001..3600"},
        UsageCase{kServe + "--stream-timeout -1", "--stream-timeout", "0.001..604800"},
        UsageCase{kServe + "--max-kept-bytes 0", "--max-kept-bytes", "1..1099511627776"},
        UsageCase{kServe + "--tool-parser qwen", "--tool-parser", "none, llama3_json, hermes, mistral, deepseek_v3, gpt_oss, phi4"},
        UsageCase{kServe + "--reasoning-parser deepseek_r1", "--reasoning-parser", "none, think, gpt_oss"},
        UsageCase{kServe + "--tool-parser hermes --reasoning-parser gpt_oss", "--reasoning-parser", "goes with tool parser 'gpt_oss'"},
        UsageCase{kServe + "--shutdown-timeout nan", "--shutdown-timeout", "0..3600"},
        UsageCase{kServe + "--shutdown-timeout -inf", "--shutdown-timeout", "0..3600"},
        UsageCase{kServe + "--max-body-bytes -1", "--max-body-bytes", "1..1073741824"},
        UsageCase{kServe + "--max-body-bytes 0", "--max-body-bytes", "1..1073741824"},
        UsageCase{kServe + "--max-messages -1", "--max-messages", "1..1000000000"},
        UsageCase{kServe + "--read-timeout nan", "--read-timeout", "1..3600"},
        UsageCase{kServe + "--threads -1", "--threads", "0..1024"},
        UsageCase{kServe + "--max-pending-connections -1", "--max-pending-connections", "1..1000000000"},
        UsageCase{kServe + "--max-inflight -1", "--max-inflight", "0..1000000000"},
        UsageCase{kServe + "--workers -1", "--workers", "0..64"},
        UsageCase{kServe + "--max-queued 0", "--max-queued", "1..1000000000"},
        UsageCase{kServe + "--max-queued nan", "--max-queued", "1..1000000000"},
        UsageCase{kServe + "--max-log-backlog -1", "--max-log-backlog", "0..1000000000"},
        UsageCase{"status --queue mem:q --watch nan", "--watch", "0.1..86400"},
        UsageCase{"status --queue mem:q --watch 1 --times -1", "--times", "1..1000000"},
        UsageCase{"aws-init --region r --prefix p --endpoint http://127.0.0.1:9 --max-receives -1", "--max-receives", "1..1000"},
        UsageCase{"aws-init --region r --prefix p --endpoint http://127.0.0.1:9 --visibility-s nan", "--visibility-s", "0..43200"},
        UsageCase{"bench template --input DATA --passes -1", "--passes", "1..1000"},
        UsageCase{"bench tokenize --tokenizer no-such --input DATA --threads -1", "--threads", "0..1024"},
        UsageCase{"lambda --max-invocations -1", "--max-invocations", "0..1000000000"},
        // The shared schemes come from the queue-scheme registry (backends/queue_schemes.cpp).
        UsageCase{kServe + "--workers 0", "--workers", "0 needs a shared --queue (sqlite-queue:, redis://, sqs://)"}),
    [](const ::testing::TestParamInfo<UsageCase>& p) { return "case" + std::to_string(p.index); });

}  // namespace
