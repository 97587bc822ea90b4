// The five cases as data, and the stage breakdown built on the report's definitions.
#include <gtest/gtest.h>

#include "run/cases.hpp"
#include "pipe/dead_letter.hpp"
#include "run/run_summary.hpp"

namespace overhead::pipe {
using ports::Record;
using run::breakdown;
using run::case_preset;
using run::CaseSink;
using run::CaseSource;
using run::kCasePresets;
using run::PublisherMode;
using run::StageBreakdown;
namespace {

TEST(CasePresets, TheSeedsFiveCases) {
  ASSERT_EQ(std::size(kCasePresets), 5u);
  for (int n = 1; n <= 5; ++n) EXPECT_EQ(case_preset(n).number, n);
  EXPECT_EQ(case_preset(1).sink, CaseSink::memory_csv);
  EXPECT_EQ(case_preset(2).sink, CaseSink::store);
  EXPECT_EQ(case_preset(3).publisher, PublisherMode::sync);
  EXPECT_EQ(case_preset(4).publisher, PublisherMode::async);
  EXPECT_EQ(case_preset(5).source, CaseSource::input_queue);
  EXPECT_THROW(case_preset(6), std::invalid_argument);
}

Record item(std::int64_t seq, std::int64_t start, bool boundary) {
  Record r;
  r.experiment = "e";
  r.tokenizer = "t";
  r.experiment_tokenizer = "e#t";
  r.id = std::to_string(seq);
  r.worker = "w";
  r.seq = seq;
  r.batch = boundary ? seq : 0;
  r.batch_boundary = boundary;
  r.received = start;
  r.render_start = start + 1000;
  r.render_end = start + 3000;    // render 2 us
  r.encode_end = start + 7000;    // encode 4 us
  r.publish_start = start + 7000;
  r.publish_acked = start + 8000;  // publish 1 us
  return r;
}

TEST(StageBreakdown, FollowsTheReportsStages) {
  // Three items 10 us apart, the third starting a new batch: item 2's cycle carries the turnover.
  const std::vector<Record> rs{item(0, 1'000'000, true), item(1, 1'010'000, false), item(2, 1'030'000, true)};
  const StageBreakdown b = breakdown(rs);
  EXPECT_EQ(b.records, 3u);
  EXPECT_DOUBLE_EQ(b.render_us, 2);
  EXPECT_DOUBLE_EQ(b.encode_us, 4);
  EXPECT_DOUBLE_EQ(b.publish_us, 1);
  EXPECT_DOUBLE_EQ(b.gap_boundary_us, 20);  // item 1: its start to item 2's
  EXPECT_DOUBLE_EQ(b.between_boundary_us, 20 - 1 - 2 - 4);
  EXPECT_EQ(b.boundary_items, 2u);
}

TEST(DeadLetterKinds, OneListAndTheSinkRefusesAnUnlistedKind) {
  for (const auto k : kDeadLetterKinds) {
    DeadLetterKind back;
    ASSERT_TRUE(parse_dead_letter_kind(kind_name(k), back));
    EXPECT_EQ(back, k);
  }
  EXPECT_STREQ(kind_name(DeadLetterKind::processing_error), "processing_error");
  EXPECT_STREQ(kind_name(DeadLetterKind::stamps_failed), "stamps_failed");
  DeadLetterSink sink;
  EXPECT_THROW(sink.add(DeadLetter{"no_such_kind", "line 1", "", "why", ""}), std::logic_error);
  sink.add(DeadLetter{kind_name(DeadLetterKind::store_failed), "line 1", "", "why", ""});
  EXPECT_EQ(sink.counts().at("store_failed"), 1u);
}

}  // namespace
}  // namespace overhead::pipe
