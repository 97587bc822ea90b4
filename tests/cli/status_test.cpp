// `overhead status`: the table and the JSON show what the queue holds, several queues at once,
// and a queue that cannot be opened is one line naming it, exit 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_support.hpp"

namespace {

using namespace overhead::cli_test;

TEST(Status, ShowsWaitingMessagesAndWhetherThereIsADeadLetterQueue) {
  const auto dir = temp_dir("status");
  const std::string with_dlq = "sqlite-queue:" + (dir / "in.db").string() + "?max_receives=3";
  const RunResult sent = run_overhead("enqueue --tokenizers phi-4 --limit 7 --queue '" + with_dlq + "' --out '" +
                                      dir.string() + "'");
  ASSERT_EQ(sent.exit_code, 0) << sent.err;

  // A queue file that is not there is an error naming it, and status does not make it.
  const RunResult missing = run_overhead("status --queue 'sqlite-queue:" + (dir / "log.db").string() + "'");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("log.db\": no such file"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "log.db"));

  const RunResult json = run_overhead("status --json --queue '" + with_dlq + "' --queue 'sqlite-queue:" +
                                      (dir / "in.db").string() + "?name=log'");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  std::string text;
  for (const auto& l : json.lines) text += l + "\n";
  const auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["waiting"], 7);
  EXPECT_EQ(j[0]["in_flight"], 0);
  EXPECT_EQ(j[0]["dead_letters"], 0);
  EXPECT_EQ(j[1]["waiting"], 0);
  EXPECT_TRUE(j[1]["dead_letters"].is_null());  // no max_receives, no DLQ

  const RunResult table = run_overhead("status --queue '" + with_dlq + "'");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  ASSERT_EQ(table.lines.size(), 3u);  // header, rule, one row
  EXPECT_NE(table.lines[0].find("waiting"), std::string::npos);
  EXPECT_NE(table.lines[2].find("| 7 |"), std::string::npos) << table.lines[2];
}

TEST(Status, AQueueThatCannotBeOpenedIsOneLineAndExitOne) {
  const RunResult bad = run_overhead("status --queue 'redis://user:s3cret-pw@127.0.0.1:1/in?connect_timeout_ms=300'");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("overhead status: "), std::string::npos) << bad.err;
  EXPECT_EQ(bad.err.find("s3cret-pw"), std::string::npos) << bad.err;
  const RunResult unknown = run_overhead("status --queue 'kafka://h/t'");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("kafka"), std::string::npos) << unknown.err;
}

}  // namespace
