// A queue URL whose password holds '#', '/' or '?' typed as is: `status`, `enqueue` and `serve`
// print the URL (in tables and errors) with the password hidden. Before the one URL reader was
// used for redaction too, such a password was printed in clear.
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

// Port 1 on loopback: nothing listens, so every command fails quickly, naming the URL.
const std::string kSecret = "hunter2";
const std::string kUrls[] = {"redis://:hunter2#x@127.0.0.1:1/0?timeout_ms=300", "redis://u:hun/ter2@127.0.0.1:1/0?timeout_ms=300",
                             "redis://u:hunter2?x@127.0.0.1:1/0"};

void expect_hidden(const RunResult& r, const std::string& what) {
  for (const std::string part : {"hunter2", "hun/ter2", "ter2"}) {
    EXPECT_EQ(r.err.find(part), std::string::npos) << what << "\n" << r.err;
    for (const auto& line : r.lines) EXPECT_EQ(line.find(part), std::string::npos) << what << "\n" << line;
  }
  EXPECT_NE(r.err.find("***"), std::string::npos) << what << " should name the URL, redacted\n" << r.err;
}

TEST(UrlSecrets, StatusHidesThePassword) {
  for (const auto& url : kUrls) expect_hidden(run_overhead("status --queue '" + url + "'"), url);
}

TEST(UrlSecrets, EnqueueHidesThePassword) {
  const auto dir = temp_dir("url_secrets");
  const std::string data =
      write_file(dir / "one.jsonl", R"({"id":"a","model":"m","prompt":[{"role":"user","content":"hi"}]})" "\n");
  for (const auto& url : kUrls)
    expect_hidden(run_overhead("enqueue --tokenizers phi-4 --data " + data + " --out " + (dir / "out").string() + " --queue '" + url + "'"), url);
}

TEST(UrlSecrets, ServeHidesThePassword) {
  const auto dir = temp_dir("url_secrets_serve");
  for (const auto& url : kUrls)
    expect_hidden(run_overhead("serve --listen 127.0.0.1:0 --workers 0 --out " + (dir / "out").string() + " --queue '" + url + "'"), url);
}

}  // namespace

namespace {

// An engine URL with user info in --decoder: the worker's first line names its decoder with the
// password hidden (the gateway's banner uses the same label). Nothing is asked of the engine: the
// worker's mem: queue is empty, and it leaves after --idle-exit.
TEST(UrlSecrets, AWorkerNamesItsDecoderWithThePasswordHidden) {
  const auto dir = temp_dir("url_secrets_decoder");
  const RunResult r = run_overhead("worker --queue mem:in --log-queue mem:log --tokenizers phi-4 --idle-exit 0.1 --no-progress "
                                   "--decoder 'openai:http://user:hunter2@127.0.0.1:1/v1,model=m' --out " + (dir / "out").string());
  ASSERT_FALSE(r.lines.empty()) << r.err;
  EXPECT_NE(r.lines[0].find("decoder openai:http://user:***@127.0.0.1:1/v1,model=m"), std::string::npos) << r.lines[0];
  for (const auto& line : r.lines) EXPECT_EQ(line.find("hunter2"), std::string::npos) << line;
  EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
}

}  // namespace
