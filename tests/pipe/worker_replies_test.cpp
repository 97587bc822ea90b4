// The worker's answers (WorkerOptions::replies): every item whose id can be read gets exactly one
// answer, whoever refuses it: decoding the body (a prompt nested deeper than the worker accepts),
// the processor (a template error), the publisher (a record the log queue never confirmed); and a
// record only once it was confirmed. Issue 21, defect 2: before, a body that did not decode, or a
// record whose publish failed, left the gateway's request without an answer (a 504 after 30 s, or
// an asynchronous request queued forever holding a --max-queued place).
#include <gtest/gtest.h>

#include <span>
#include <string>

#include "../reply/recording_path.hpp"
#include "backends/open.hpp"
#include "fake_processor.hpp"
#include "ports/errors.hpp"
#include "pipe/source.hpp"
#include "pipe/work_item.hpp"
#include "pipe/worker.hpp"

namespace {

using namespace overhead;
using namespace overhead::pipe;
using ports::Failure;
using ports::QueueError;
using ports::Record;
using ports::StampPatch;
using namespace std::chrono_literals;

std::string body_of(const std::string& id, const std::string& tokenizer, const std::string& role = "user") {
  auto src = parse_source_line(overhead::pipe::testing::source_line(id, "hello", role), 1);
  return encode_item_body(*src, tokenizer, false, "in-reply-gw");
}

// A body the gateway could have sent whose prompt holds a value nested `depth` levels deep.
std::string deep_body(const std::string& id, int depth) {
  std::string value(depth, '[');
  value += std::string(depth, ']');
  return "{\"tokenizer\":\"llama\",\"line\":0,\"id\":\"" + id + "\",\"model\":\"m\",\"usage\":null,\"prompt\":[{\"role\":\"user\","
         "\"content\":\"hi\",\"x\":" + value + "}],\"reply_to\":\"in-reply-gw\"}";
}

struct AnsweredRun {
  reply::testing::RecordingPath answers;
  DeadLetterSink dead;
  WorkerStats stats;
};

void run_over_queue(AnsweredRun& run, const std::vector<std::string>& bodies, RecordSink& sink) {
  const std::string name = "mem:" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name());
  auto queue = backends::open_queue(name);
  (void)queue->send_batch(std::span<const std::string>(bodies));
  QueueSource source(queue, 0ms, 0ms, nullptr, bodies.size());
  FunctionProcessor processor = overhead::pipe::testing::fake_processor();
  WorkerOptions o;
  o.replies = &run.answers;
  o.retry.attempts = 2;
  o.retry.sleep = [](std::chrono::microseconds) {};
  Worker worker(source, processor, sink, run.dead, o);
  run.stats = worker.run();
}

TEST(WorkerReplies, EveryRefusalIsAnsweredAndARecordOnlyOnceConfirmed) {
  AnsweredRun run;
  MemorySink sink;
  run_over_queue(run,
                 {body_of("good", "llama"), body_of("template", "gemma", "system"), body_of("unknown", "nope"),
                  deep_body("deep", 300)},
                 sink);
  EXPECT_EQ(run.answers.replies(), 4u);
  const reply::Reply good = run.answers.wait("good");
  EXPECT_TRUE(good.ok());
  EXPECT_EQ(good.record.id, "good");
  EXPECT_GT(good.record.token_count, 0);
  EXPECT_EQ(run.answers.wait("template").error_kind, "template_error");
  EXPECT_EQ(run.answers.wait("unknown").error_kind, "unknown_tokenizer");
  // The prompt is too deep to decode: the item is refused, and the refusal still reaches the gateway.
  const reply::Reply deep = run.answers.wait("deep");
  EXPECT_FALSE(deep.ok());
  EXPECT_NE(deep.error_kind, "none") << "no answer for an item whose body did not decode";
  EXPECT_EQ(run.dead.total(), 3u);
}

// A log queue that refuses every record, as a failing broker would.
class RefusingSink final : public RecordSink {
 public:
  void put(const Record&) override { throw QueueError("mem: down", Failure::transient); }
  void put_stamps(std::span<const StampPatch>) override {}
};

TEST(WorkerReplies, ARecordThePublisherGaveUpOnIsAnsweredAsARefusal) {
  AnsweredRun run;
  RefusingSink sink;
  run_over_queue(run, {body_of("lost", "llama")}, sink);
  const reply::Reply lost = run.answers.wait("lost");
  EXPECT_FALSE(lost.ok());
  EXPECT_EQ(lost.error_kind, "publish_failed");
  EXPECT_EQ(run.answers.replies(), 1u);
}

}  // namespace
