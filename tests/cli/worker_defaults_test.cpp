// `overhead worker`'s defaults that depend on its queue: over a shared queue (a gateway can name
// reply queues there) it streams by default, as `serve` does (--max-decodes 64, so a stream's
// deltas arrive as the engine generates); over mem: it keeps a batch run's one at a time; a given
// --max-decodes wins either way. The worker's first line says how many generations it keeps in
// flight. Nothing is asked of a decoder: the queues are empty and the worker leaves after
// --idle-exit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli_support.hpp"

namespace overhead::cli_test {
namespace {

// The worker's first line, its queue "sqlite" (a shared queue file) or "mem".
std::string first_line(const std::string& scheme, const std::string& extra) {
  const auto dir = temp_dir("worker_defaults_" + scheme);
  const std::string queue = scheme == "sqlite" ? "sqlite-queue:" + (dir / "q.db").string() + "?name=chat" : "mem:chat";
  const RunResult r = run_overhead("worker --queue '" + queue + "' --log-queue mem:log --tokenizers phi-4 --idle-exit 0.1 "
                                   "--no-progress --decoder sim:prefill=1e6,decode=1e6 " + extra + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::filesystem::remove_all(dir);
  return r.lines.empty() ? std::string() : r.lines[0];
}

TEST(WorkerDefaults, OverASharedQueueTheWorkerStreamsWithoutBeingTold) {
  EXPECT_NE(first_line("sqlite", "").find(", 64 generations in flight"), std::string::npos);
}

TEST(WorkerDefaults, OverMemItKeepsOneGenerationAtATime) {
  EXPECT_EQ(first_line("mem", "").find("generations in flight"), std::string::npos);
}

TEST(WorkerDefaults, AGivenMaxDecodesWins) {
  EXPECT_EQ(first_line("sqlite", "--max-decodes 0").find("generations in flight"), std::string::npos);
  EXPECT_NE(first_line("sqlite", "--max-decodes 8").find(", 8 generations in flight"), std::string::npos);
  EXPECT_NE(first_line("mem", "--max-decodes 3").find(", 3 generations in flight"), std::string::npos);
}

}  // namespace
}  // namespace overhead::cli_test
